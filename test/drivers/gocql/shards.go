// Shard awareness as the node and the driver show it: a dialer that records every connection gocql opens and the
// SCYLLA_SHARD the node's SUPPORTED gave it, the owner shard of a token (biased-token-round-robin, ignore_msb 12,
// computed here, not by the driver), and the node's per-shard Prometheus counters.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gocql/gocql"
)

// dialed is one connection gocql opened: its ports, and the shard the node's SUPPORTED named (-1 until read).
type dialed struct {
	local, remote int
	shard         int
	closed        bool
}

// recordingDialer is gocql's ScyllaShardAwareDialer (it binds the source port gocql picks for a shard) that
// remembers each connection and reads the first SUPPORTED frame it carries.
type recordingDialer struct {
	inner gocql.ScyllaShardAwareDialer
	mu    sync.Mutex
	conns []*dialed
}

func (d *recordingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.inner.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	rec := &dialed{local: c.LocalAddr().(*net.TCPAddr).Port, remote: c.RemoteAddr().(*net.TCPAddr).Port, shard: -1}
	d.mu.Lock()
	d.conns = append(d.conns, rec)
	d.mu.Unlock()
	return &sniffingConn{Conn: c, d: d, rec: rec}, nil
}

// snapshot copies the records under the lock.
func (d *recordingDialer) snapshot() []dialed {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]dialed, len(d.conns))
	for i, c := range d.conns {
		out[i] = *c
	}
	return out
}

// sniffingConn passes every byte through, keeping a copy of the first response frame (the SUPPORTED answering
// gocql's OPTIONS) until it is whole.
type sniffingConn struct {
	net.Conn
	d    *recordingDialer
	rec  *dialed
	head []byte
	done bool
}

func (c *sniffingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.head = append(c.head, p[:n]...)
		if len(c.head) >= 9 && len(c.head) >= 9+int(binary.BigEndian.Uint32(c.head[5:9])) {
			c.done = true
			shard := supportedShard(c.head)
			c.d.mu.Lock()
			c.rec.shard = shard
			c.d.mu.Unlock()
			c.head = nil
		}
	}
	return n, err
}

func (c *sniffingConn) Close() error {
	c.d.mu.Lock()
	c.rec.closed = true
	c.d.mu.Unlock()
	return c.Conn.Close()
}

// supportedShard is SCYLLA_SHARD from a v4 SUPPORTED frame (opcode 0x06, a [string multimap] body), or -2 when
// the frame is not one or lacks the key.
func supportedShard(frame []byte) int {
	if frame[4] != 0x06 {
		return -2
	}
	body := frame[9 : 9+int(binary.BigEndian.Uint32(frame[5:9]))]
	str := func() (string, bool) {
		if len(body) < 2 {
			return "", false
		}
		n := int(binary.BigEndian.Uint16(body))
		if len(body) < 2+n {
			return "", false
		}
		s := string(body[2 : 2+n])
		body = body[2+n:]
		return s, true
	}
	if len(body) < 2 {
		return -2
	}
	keys := int(binary.BigEndian.Uint16(body))
	body = body[2:]
	for i := 0; i < keys; i++ {
		key, ok := str()
		if !ok || len(body) < 2 {
			return -2
		}
		values := int(binary.BigEndian.Uint16(body))
		body = body[2:]
		for j := 0; j < values; j++ {
			v, ok := str()
			if !ok {
				return -2
			}
			if key == "SCYLLA_SHARD" && j == 0 {
				if s, err := strconv.Atoi(v); err == nil {
					return s
				}
				return -2
			}
		}
	}
	return -2
}

// shardOfToken is the shard owning a Murmur3 token under biased-token-round-robin with 12 ignored high bits.
func shardOfToken(token int64, shards int) int {
	biased := uint64(token) + 1<<63
	hi, _ := bits.Mul64(biased<<12, uint64(shards))
	return int(hi)
}

// promCounter reads one metric's value per shard from the node's /metrics.
func promCounter(promPort int, name string) (map[int]int64, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics?__name__=%s", promPort, name))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("/metrics: %s %s", resp.Status, body)
	}
	line := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `\{.*shard="(\d+)".*\} (\S+)$`)
	out := map[int]int64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if m := line.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
			shard, _ := strconv.Atoi(m[1])
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q", name, sc.Text())
			}
			out[shard] = int64(v)
		}
	}
	return out, sc.Err()
}

func sum(m map[int]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// recordingLogger keeps gocql's log lines (and echoes them to stderr) so that a fallback it logs is seen.
type recordingLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *recordingLogger) Print(v ...interface{}) { l.add(fmt.Sprint(v...)) }
func (l *recordingLogger) Printf(format string, v ...interface{}) {
	l.add(fmt.Sprintf(format, v...))
}
func (l *recordingLogger) Println(v ...interface{}) { l.add(fmt.Sprintln(v...)) }

func (l *recordingLogger) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
	fmt.Fprintln(os.Stderr, "gocql: "+strings.TrimSpace(s))
}

func (l *recordingLogger) containing(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}
