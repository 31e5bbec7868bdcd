// Cassandra 5.0.9 Snapshot and ClearSnapshot on the command lines of nodetool_test.cc snapshots.
import org.apache.cassandra.tools.*;
import org.apache.cassandra.tools.nodetool.*;
import java.lang.reflect.*;
class FakeProbe extends NodeProbe {
    FakeProbe() { super(); this.output = new Output(System.out, System.err); }
    public void takeSnapshot(String a, String b, java.util.Map<String,String> o, String... k) {}
    public void takeMultipleTableSnapshot(String a, java.util.Map<String,String> o, String... k) {}
    public void clearSnapshot(java.util.Map<String,Object> o, String t, String... k) {}
    public void clearSnapshot(String t, String... k) {}
}
void set(Object o, String f, Object v) throws Exception { Field x = o.getClass().getDeclaredField(f); x.setAccessible(true); x.set(o, v); }
var p = new FakeProbe();
var s = new Snapshot(); set(s, "snapshotName", "t1"); s.execute(p);
s = new Snapshot(); set(s, "snapshotName", "t2"); set(s, "skipFlush", true); set(s, "keyspaces", new java.util.ArrayList<>(java.util.List.of("ks1","ks2"))); s.execute(p);
s = new Snapshot(); set(s, "snapshotName", "t3"); set(s, "ktList", "ks1.tab"); s.execute(p);
var c = new ClearSnapshot(); set(c, "snapshotName", "t1"); c.execute(p);
c = new ClearSnapshot(); set(c, "clearAllSnapshots", true); set(c, "keyspaces", new java.util.ArrayList<>(java.util.List.of("ks1"))); c.execute(p);
try { c = new ClearSnapshot(); c.execute(p); } catch (Exception e) { System.out.println("E: " + e.getMessage()); }
try { c = new ClearSnapshot(); set(c, "clearAllSnapshots", true); set(c, "snapshotName", "x"); c.execute(p); } catch (Exception e) { System.out.println("E: " + e.getMessage()); }
/exit
