// The shard-awareness checks of the workload: the driver's pool holds a connection per shard, and its
// token-routed prepared statements are served on their owner shard, which the node's counters show; routed to
// another shard on purpose, the same statements hop once each, so the counter can fail.
package main

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/gocql/gocql"
)

// checkShardPool waits until gocql holds a connection per shard beside its control connection, and checks that
// each connection to the shard-aware port landed on the shard its source port asks for (port mod shards).
func checkShardPool(d *recordingDialer, awarePort, shards int) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conns := d.snapshot()
		var open []dialed
		covered := map[int]bool{}
		aware := 0
		for _, c := range conns {
			if c.remote == awarePort && c.shard >= 0 && c.shard != c.local%shards {
				fail("a connection to the shard-aware port from local port %d is on shard %d, not %d", c.local, c.shard,
					c.local%shards)
			}
			if c.closed || c.shard < 0 {
				continue
			}
			open = append(open, c)
			covered[c.shard] = true
			if c.remote == awarePort {
				aware++
			}
		}
		if len(open) == shards+1 && len(covered) == shards && aware >= shards-1 {
			sort.Slice(open, func(i, j int) bool { return open[i].shard < open[j].shard })
			fmt.Printf("gocql connections: %d open (a pool connection per shard and the control connection), %d "+
				"to the shard-aware port:", len(open), aware)
			for _, c := range open {
				port := "regular port"
				if c.remote == awarePort {
					port = fmt.Sprintf("shard-aware port from local port %d = %d mod %d", c.local, c.local%shards,
						shards)
				}
				fmt.Printf(" [shard %d: %s]", c.shard, port)
			}
			fmt.Println()
			return
		}
		if time.Now().After(deadline) {
			fail("no connection per shard after 30 s: %+v", conns)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settle waits until gocql's schema refresh after the DDL is over: the driver debounces schema events for 1 s,
// then reads system_schema (single partitions, on the control connection's shard), and those reads hop like any
// statement; they must not fall into the measured window. Over once replica_cross_shard_ops holds still.
func settle(promPort, shards int) {
	time.Sleep(1200 * time.Millisecond)
	deadline := time.Now().Add(15 * time.Second)
	last := sum(counter(promPort, "scylla_storage_proxy_replica_cross_shard_ops", shards))
	for {
		time.Sleep(400 * time.Millisecond)
		now := sum(counter(promPort, "scylla_storage_proxy_replica_cross_shard_ops", shards))
		if now == last {
			return
		}
		if time.Now().After(deadline) {
			fail("replica_cross_shard_ops still moving 15 s after the DDL (%d -> %d) with no statement sent", last, now)
		}
		last = now
	}
}

// counter is a node counter per shard; every shard must have its series.
func counter(promPort int, name string, shards int) map[int]int64 {
	m, err := promCounter(promPort, name)
	if err != nil {
		fail("%s: %v", name, err)
	}
	for s := 0; s < shards; s++ {
		if _, ok := m[s]; !ok || len(m) != shards {
			fail("%s: series %v, want shards 0..%d", name, m, shards-1)
		}
	}
	return m
}

// selectPartitions reads every partition of the model with a prepared single-partition SELECT (token-routed)
// and compares it with the model; returns the partition keys in order.
func selectPartitions(session *gocql.Session, model map[[2]int]row) []int {
	byPk := map[int]map[int]row{}
	for k, r := range model {
		if byPk[k[0]] == nil {
			byPk[k[0]] = map[int]row{}
		}
		byPk[k[0]][k[1]] = r
	}
	var pks []int
	for pk := range byPk {
		pks = append(pks, pk)
	}
	sort.Ints(pks)
	for _, pk := range pks {
		it := session.Query("SELECT ck, name, tags, m FROM gq.t WHERE pk = ?", pk).Iter()
		got := map[int]row{}
		r := row{pk: pk}
		for it.Scan(&r.ck, &r.name, &r.tags, &r.m) {
			if len(r.m) == 0 {
				r.m = nil
			}
			got[r.ck] = r
			r = row{pk: pk}
		}
		if err := it.Close(); err != nil {
			fail("prepared select of partition %d: %v", pk, err)
		}
		want := byPk[pk]
		for ck, w := range want {
			if len(w.m) == 0 {
				w.m = nil
				want[ck] = w
			}
		}
		if !reflect.DeepEqual(got, want) {
			fail("partition %d: got %+v, want %+v", pk, got, want)
		}
	}
	fmt.Printf("prepared selects: %d partitions, equal to the model\n", len(pks))
	return pks
}

// checkRouting checks the window of prepared inserts and selects (the counters before and after it) against
// the owner shard of each partition, the node's token() mapped to a shard here; then sends one prepared SELECT
// per partition routed by the key of a partition another shard owns, which must hop once each.
func checkRouting(session *gocql.Session, model map[[2]int]row, pks []int, shards, promPort int,
	crossBefore, crossAfter, servedBefore, servedAfter map[int]int64) {
	owner := map[int]int{}
	owners := map[int]bool{}
	for _, pk := range pks {
		var token int64
		if err := session.Query("SELECT token(pk) FROM gq.t WHERE pk = ?", pk).Scan(&token); err != nil {
			fail("token(%d): %v", pk, err)
		}
		owner[pk] = shardOfToken(token, shards)
		owners[owner[pk]] = true
	}
	if len(owners) != shards {
		fail("the partitions are owned by shards %v only", owners)
	}
	owned := map[int]int64{}
	for k := range model {
		owned[owner[k[0]]]++
	}
	for _, pk := range pks {
		owned[owner[pk]]++
	}
	statements := int64(len(model) + len(pks))
	if sum(crossAfter) != sum(crossBefore) {
		fail("%d token-routed prepared statements crossed shards: replica_cross_shard_ops %v -> %v", statements,
			crossBefore, crossAfter)
	}
	served := map[int]int64{}
	for s := 0; s < shards; s++ {
		served[s] = servedAfter[s] - servedBefore[s]
		if served[s] < owned[s] {
			fail("requests served per shard %v, fewer than the statements each owns %v", served, owned)
		}
	}
	fmt.Printf("%d prepared inserts and selects routed by token: replica_cross_shard_ops stayed %d (per shard "+
		"%v); requests served per shard %v, owned %v\n", statements, sum(crossAfter), crossAfter, served, owned)

	// The control: each partition's SELECT routed by the key of a partition that another shard owns.
	before := counter(promPort, "scylla_storage_proxy_replica_cross_shard_ops", shards)
	for _, pk := range pks {
		other := -1
		for _, o := range pks {
			if owner[o] != owner[pk] {
				other = o
				break
			}
		}
		key := make([]byte, 4)
		binary.BigEndian.PutUint32(key, uint32(int32(other)))
		it := session.Query("SELECT ck FROM gq.t WHERE pk = ?", pk).RoutingKey(key).Iter()
		var ck int
		for it.Scan(&ck) {
		}
		if err := it.Close(); err != nil {
			fail("misrouted select of %d: %v", pk, err)
		}
	}
	after := counter(promPort, "scylla_storage_proxy_replica_cross_shard_ops", shards)
	if sum(after)-sum(before) != int64(len(pks)) {
		fail("%d selects routed to a shard other than their owner: replica_cross_shard_ops moved %d (%v -> %v)",
			len(pks), sum(after)-sum(before), before, after)
	}
	fmt.Printf("control: %d selects routed by another shard's key: replica_cross_shard_ops +%d, one hop each\n",
		len(pks), sum(after)-sum(before))
}
