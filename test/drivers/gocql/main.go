// A gocql workload against one Reef node (run by test/suites/cql_gocql.py): DDL, the table read back through the
// driver's schema metadata, prepared inserts of mixed types, a paged select checked against the rows written, a
// logged batch, and an error the driver must map to its RequestErrInvalid. With ScyllaDB's gocql it also shows
// shard awareness: a connection per shard (those to the shard-aware port on the shard their source port names)
// and token-routed prepared statements that never hop to another shard (the node's replica_cross_shard_ops).
// Exits non-zero, naming the step, on the first difference.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/gocql/gocql"
)

// checkMetadata reads the table back through the driver's schema metadata (system_schema, and
// system_schema.scylla_tables for ScyllaDB's gocql).
func checkMetadata(session *gocql.Session) {
	km, err := session.KeyspaceMetadata("gq")
	if err != nil {
		fail("keyspace metadata: %v", err)
	}
	t, ok := km.Tables["t"]
	if !ok {
		fail("keyspace metadata: no table t in %v", km.Tables)
	}
	var pk, ck []string
	for _, c := range t.PartitionKey {
		pk = append(pk, c.Name)
	}
	for _, c := range t.ClusteringColumns {
		ck = append(ck, c.Name)
	}
	if !reflect.DeepEqual(pk, []string{"pk"}) || !reflect.DeepEqual(ck, []string{"ck"}) || len(t.Columns) != 5 ||
		t.Columns["tags"].Type != "list<text>" || t.Columns["m"].Type != "map<text, int>" {
		fail("table metadata: partition key %v, clustering %v, columns %+v", pk, ck, t.Columns)
	}
	fmt.Printf("keyspace metadata: %s, table t with partition key %v, clustering key %v, %d columns\n",
		km.StrategyClass, pk, ck, len(t.Columns))
}

type row struct {
	pk   int
	ck   int
	name string
	tags []string
	m    map[string]int
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAILED: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	port := flag.Int("port", 9042, "the node's native_transport_port")
	rows := flag.Int("rows", 500, "rows to insert")
	pageSize := flag.Int("page-size", 37, "the paged select's page size")
	awarePort := flag.Int("aware-port", 0, "the node's native_shard_aware_transport_port")
	promPort := flag.Int("prom", 0, "the node's Prometheus port")
	shards := flag.Int("shards", 0, "the node's shard count")
	flag.Parse()
	if *awarePort == 0 || *promPort == 0 || *shards < 2 {
		fail("-aware-port, -prom and -shards (2 or more) are required")
	}

	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port = *port
	cluster.ProtoVersion = 4
	cluster.Timeout = 20 * time.Second
	cluster.ConnectTimeout = 20 * time.Second
	cluster.Consistency = gocql.One
	cluster.DisableInitialHostLookup = false
	// Token-aware routing, as the fork's README sets it (v1.14's default is round robin over the connections).
	cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	dialer := &recordingDialer{inner: gocql.ScyllaShardAwareDialer{Dialer: net.Dialer{Timeout: cluster.ConnectTimeout}}}
	cluster.Dialer = dialer
	logger := &recordingLogger{}
	cluster.Logger = logger
	gocql.Logger = logger // v1.14's shard-aware pool logs through the package's logger
	session, err := cluster.CreateSession()
	if err != nil {
		fail("connect: %v", err)
	}
	defer session.Close()

	ddl := []string{
		"CREATE KEYSPACE gq WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE gq.t (pk int, ck int, name text, tags list<text>, m map<text, int>, PRIMARY KEY (pk, ck))",
	}
	for _, q := range ddl {
		if err := session.Query(q).Exec(); err != nil {
			fail("%s: %v", q, err)
		}
	}
	if err := session.AwaitSchemaAgreement(context.Background()); err != nil {
		fail("schema agreement: %v", err)
	}
	checkMetadata(session)
	checkShardPool(dialer, *awarePort, *shards)
	settle(*promPort, *shards)

	crossBefore := counter(*promPort, "scylla_storage_proxy_replica_cross_shard_ops", *shards)
	servedBefore := counter(*promPort, "scylla_transport_requests_served", *shards)
	model := map[[2]int]row{}
	ins := "INSERT INTO gq.t (pk, ck, name, tags, m) VALUES (?, ?, ?, ?, ?)"
	for i := 0; i < *rows; i++ {
		r := row{pk: i % 23, ck: i, name: fmt.Sprintf("n%d", i), tags: []string{"a", fmt.Sprint(i)},
			m: map[string]int{"i": i}}
		if err := session.Query(ins, r.pk, r.ck, r.name, r.tags, r.m).Exec(); err != nil {
			fail("prepared insert %d: %v", i, err)
		}
		model[[2]int{r.pk, r.ck}] = r
	}
	fmt.Printf("prepared inserts: %d rows\n", *rows)
	pks := selectPartitions(session, model)
	crossAfter := counter(*promPort, "scylla_storage_proxy_replica_cross_shard_ops", *shards)
	servedAfter := counter(*promPort, "scylla_transport_requests_served", *shards)
	checkRouting(session, model, pks, *shards, *promPort, crossBefore, crossAfter, servedBefore, servedAfter)
	if lines := logger.containing("wrong shard"); len(lines) != 0 {
		fail("gocql fell back from the shard-aware port: %v", lines)
	}

	b := session.NewBatch(gocql.LoggedBatch)
	for ck := 0; ck < 5; ck++ {
		r := row{pk: 1000, ck: ck, name: fmt.Sprintf("batch%d", ck), tags: []string{"b"}, m: map[string]int{}}
		b.Query(ins, r.pk, r.ck, r.name, r.tags, r.m)
		model[[2]int{r.pk, r.ck}] = r
	}
	b.Query("UPDATE gq.t SET name = ? WHERE pk = ? AND ck = ?", "renamed", 0, 0)
	r0 := model[[2]int{0, 0}]
	r0.name = "renamed"
	model[[2]int{0, 0}] = r0
	if err := session.ExecuteBatch(b); err != nil {
		fail("batch: %v", err)
	}
	fmt.Println("logged batch: 6 statements")

	// Paged select, a page per request (PageState turns gocql's automatic paging off): pages of at most
	// pageSize, every row once, equal to the model.
	iter := session.Query("SELECT pk, ck, name, tags, m FROM gq.t").PageSize(*pageSize).PageState(nil).Iter()
	got := map[[2]int]row{}
	var r row
	pages := 0
	seen := 0
	for {
		for iter.Scan(&r.pk, &r.ck, &r.name, &r.tags, &r.m) {
			k := [2]int{r.pk, r.ck}
			if _, dup := got[k]; dup {
				fail("paged select returned %v twice", k)
			}
			got[k] = r
			r = row{}
			seen++
		}
		pages++
		if iter.NumRows() > *pageSize {
			fail("paged select: page %d has %d rows", pages, iter.NumRows())
		}
		if len(iter.PageState()) == 0 {
			break
		}
		state := iter.PageState()
		if err := iter.Close(); err != nil {
			fail("paged select page %d: %v", pages, err)
		}
		iter = session.Query("SELECT pk, ck, name, tags, m FROM gq.t").PageSize(*pageSize).PageState(state).Iter()
	}
	if err := iter.Close(); err != nil {
		fail("paged select: %v", err)
	}
	if len(got) != len(model) {
		fail("paged select: %d rows, want %d", len(got), len(model))
	}
	for k, want := range model {
		g := got[k]
		if len(want.m) == 0 {
			want.m = nil
		}
		if len(g.m) == 0 {
			g.m = nil
		}
		if !reflect.DeepEqual(g, want) {
			fail("row %v: got %+v, want %+v", k, g, want)
		}
	}
	minPages := (len(model) + *pageSize - 1) / *pageSize
	if pages != minPages && pages != minPages+1 {
		fail("paged select: %d pages for %d rows of page size %d", pages, len(model), *pageSize)
	}
	fmt.Printf("paged select: %d rows in %d pages of %d, equal to the model\n", seen, pages, *pageSize)

	// A single partition, in clustering order.
	var cks []int
	it := session.Query("SELECT ck FROM gq.t WHERE pk = ?", 1000).Iter()
	var ck int
	for it.Scan(&ck) {
		cks = append(cks, ck)
	}
	if err := it.Close(); err != nil || !sort.IntsAreSorted(cks) || len(cks) != 5 {
		fail("partition 1000: %v %v", cks, err)
	}

	// Errors: an unknown column is RequestErrInvalid (0x2200) naming it; bad syntax is a syntax error (0x2000).
	err = session.Query("INSERT INTO gq.t (pk, ck, nope) VALUES (1, 1, 1)").Exec()
	var reqErr gocql.RequestError
	if !errors.As(err, &reqErr) || reqErr.Code() != gocql.ErrCodeInvalid || !strings.Contains(reqErr.Message(), "nope") {
		fail("unknown column: got %v", err)
	}
	err = session.Query("SELEC * FROM gq.t").Exec()
	if !errors.As(err, &reqErr) || reqErr.Code() != gocql.ErrCodeSyntax {
		fail("syntax error: got %v", err)
	}
	fmt.Printf("errors: invalid (0x%x) and syntax (0x%x) as the driver's RequestError\n", gocql.ErrCodeInvalid,
		gocql.ErrCodeSyntax)

	if err := session.Query("DROP KEYSPACE gq").Exec(); err != nil {
		fail("drop keyspace: %v", err)
	}
	fmt.Println("gocql workload: ok")
}
