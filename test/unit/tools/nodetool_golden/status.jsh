// Cassandra 5.0.9 Status on nodetool_test.cc status_fixture: one token and no keyspace; three tokens and ks1.
import org.apache.cassandra.tools.*;
import org.apache.cassandra.tools.nodetool.*;
import org.apache.cassandra.locator.EndpointSnitchInfoMBean;
import java.lang.reflect.*;
import java.util.*;
class Snitch implements EndpointSnitchInfoMBean {
    public String getRack(String host) { return "rack1"; }
    public String getDatacenter(String host) { return "datacenter1"; }
    public String getRack() { return "rack1"; }
    public String getDatacenter() { return "datacenter1"; }
    public String getSnitchName() { return "x"; }
}
class FakeProbe extends NodeProbe {
    int tokens; boolean effective;
    FakeProbe(int tokens, boolean effective) { super(); this.tokens = tokens; this.effective = effective; this.output = new Output(System.out, System.err); }
    public Map<String, String> getTokenToEndpointMap(boolean p) { Map<String,String> m = new LinkedHashMap<>(); m.put("-3485513579396041028", "127.0.0.1:7000"); for (int i = 1; i < tokens; i++) m.put(Integer.toString(i * 1000), "127.0.0.1:7000"); return m; }
    public List<String> getLiveNodes(boolean p) { return List.of("127.0.0.1:7000"); }
    public List<String> getJoiningNodes(boolean p) { return List.of(); }
    public List<String> getLeavingNodes(boolean p) { return List.of(); }
    public List<String> getMovingNodes(boolean p) { return List.of(); }
    public List<String> getUnreachableNodes(boolean p) { return List.of(); }
    public Map<String, String> getLoadMap(boolean p) { return Map.of("127.0.0.1:7000", "1.43 MiB"); }
    public Map<String, String> getHostIdMap(boolean p) { return Map.of("127.0.0.1:7000", "5d3f7e4c-7c0e-4d5a-8c1e-2f8a9b6c1d00"); }
    public EndpointSnitchInfoMBean getEndpointSnitchInfoProxy() { return new Snitch(); }
    public Map<String, Float> effectiveOwnershipWithPort(String ks) { if (!effective) throw new IllegalStateException("Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless"); return Map.of("127.0.0.1:7000", 1.0f); }
    public Map<String, Float> getOwnershipWithPort() { return Map.of("127.0.0.1:7000", 1.0f); }
    public List<String> getKeyspaces() { return List.of("ks1"); }
}
void set(Object o, String f, Object v) throws Exception { Field x = o.getClass().getDeclaredField(f); x.setAccessible(true); x.set(o, v); }
var s = new Status(); s.execute(new FakeProbe(1, false));
System.out.println("=====");
s = new Status(); set(s, "keyspace", "ks1"); s.execute(new FakeProbe(3, true));
System.out.println("=====");
/exit
