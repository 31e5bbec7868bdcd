// A Java driver 4.x workload against one Reef node (run by test/suites/cql_java_driver.py): DDL, prepared inserts
// of mixed types, a batch, a select paged by hand through the paging state checked against the rows written, and
// an error the driver maps to InvalidQueryException. Exits non-zero, naming the step, on the first difference.
package reef;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.api.core.servererrors.SyntaxError;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

public final class Workload {
    private static void fail(String what) {
        System.err.println("FAILED: " + what);
        System.exit(1);
    }

    private record Value(String name, double score, Set<String> tags, Map<String, Integer> attrs) {}

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        int rows = args.length > 1 ? Integer.parseInt(args[1]) : 400;
        // system.local's data_center (the driver routes only to its local one).
        String dc = args.length > 2 ? args[2] : "datacenter1";
        var config = DriverConfigLoader.programmaticBuilder()
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(30))
                .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(20))
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(20))
                .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(20))
                .build();
        try (CqlSession s = CqlSession.builder()
                .addContactPoint(new InetSocketAddress("127.0.0.1", port))
                .withLocalDatacenter(dc)
                .withConfigLoader(config)
                .build()) {
            System.out.println("connected: " + s.getMetadata().getNodes().size() + " node(s), protocol "
                    + s.getContext().getProtocolVersion());
            s.execute("CREATE KEYSPACE jd WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
            s.execute("CREATE TABLE jd.t (pk int, ck int, name text, score double, tags set<text>, "
                    + "attrs map<text, int>, raw blob, PRIMARY KEY (pk, ck))");
            if (!s.checkSchemaAgreement()) {
                fail("no schema agreement");
            }
            PreparedStatement ins = s.prepare(
                    "INSERT INTO jd.t (pk, ck, name, score, tags, attrs, raw) VALUES (?, ?, ?, ?, ?, ?, ?)");
            if (!ins.getPartitionKeyIndices().equals(List.of(0))) {
                fail("partition key indices " + ins.getPartitionKeyIndices());
            }
            Map<List<Integer>, Value> model = new HashMap<>();
            for (int i = 0; i < rows; i++) {
                var v = new Value("n" + i, i / 4.0, Set.of("t" + (i % 5), "all"), Map.of("a", i, "b", -i));
                s.execute(ins.bind(i % 29, i, v.name, v.score, v.tags, v.attrs, ByteBuffer.wrap(new byte[] {(byte) i})));
                model.put(List.of(i % 29, i), v);
            }
            System.out.println("prepared inserts: " + rows);

            var batch = BatchStatement.builder(BatchType.LOGGED);
            for (int ck = 0; ck < 4; ck++) {
                var v = new Value("b" + ck, ck, Set.of(), Map.of());
                batch.addStatement(ins.bind(1000, ck, v.name, v.score, v.tags, v.attrs, ByteBuffer.allocate(0)));
                model.put(List.of(1000, ck), v);
            }
            s.execute(batch.build());
            System.out.println("logged batch: 4 statements");

            // Paged by hand: each page fetched with the previous page's paging state.
            SimpleStatement sel = SimpleStatement.newInstance("SELECT pk, ck, name, score, tags, attrs FROM jd.t")
                    .setPageSize(41);
            Map<List<Integer>, Value> got = new HashMap<>();
            int pages = 0;
            ByteBuffer state = null;
            do {
                ResultSet rs = s.execute(sel.setPagingState(state));
                int inPage = rs.getAvailableWithoutFetching();
                if (inPage > 41) {
                    fail("page of " + inPage + " rows");
                }
                for (int k = 0; k < inPage; k++) {
                    Row r = rs.one();
                    var key = List.of(r.getInt("pk"), r.getInt("ck"));
                    var v = new Value(r.getString("name"), r.getDouble("score"), r.getSet("tags", String.class),
                            r.getMap("attrs", String.class, Integer.class));
                    if (got.put(key, v) != null) {
                        fail("row " + key + " twice");
                    }
                }
                pages++;
                state = rs.getExecutionInfo().getPagingState();
            } while (state != null);
            if (!got.equals(model)) {
                fail("paged select: " + got.size() + " rows, model " + model.size() + "; differ");
            }
            System.out.println("paged select: " + got.size() + " rows in " + pages + " pages of 41, equal to the model");

            try {
                s.execute("INSERT INTO jd.t (pk, ck, nope) VALUES (1, 1, 1)");
                fail("unknown column accepted");
            } catch (InvalidQueryException e) {
                if (!e.getMessage().contains("nope")) {
                    fail("the error does not name the column: " + e.getMessage());
                }
            }
            try {
                s.execute("SELEC * FROM jd.t");
                fail("bad syntax accepted");
            } catch (SyntaxError e) {
                // expected
            }
            System.out.println("errors: InvalidQueryException, SyntaxError");
            s.execute("DROP KEYSPACE jd");
            System.out.println("java driver workload: ok");
        }
    }
}
