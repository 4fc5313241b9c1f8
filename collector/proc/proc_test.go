package proc

import (
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1234 (tokex) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 0 0", 3.0, true},
		{"99 (we ird) (name)) R 1 2 3 4 5 6 7 8 9 10 7 3 0 0 20 0 1 0 1 0 0", 0.10, true},
		{"garbage", 0, false},
		{"1 (x) S 1 2", 0, false},
	}
	for _, c := range cases {
		got, err := parsePIDStat([]byte(c.in))
		if (err == nil) != c.ok || (c.ok && got.own != c.want) {
			t.Errorf("parseStat(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestProcessReadsItself(t *testing.T) {
	p := Process{PID: os.Getpid()}
	a, err := p.Read()
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(end) {
	}
	b, _ := p.Read()
	if b.CPUSeconds < a.CPUSeconds || b.MemoryBytes <= 0 {
		t.Errorf("readings %+v then %+v", a, b)
	}
	if r := Rate(a, b); r < 0 || r > 2100 {
		t.Errorf("rate %v millicores", r)
	}
	if _, err := (Process{PID: 1 << 30}).Read(); err == nil {
		t.Error("read a process that does not exist")
	}
}

func TestRate(t *testing.T) {
	t0 := time.Unix(0, 0)
	if r := Rate(Reading{At: t0, CPUSeconds: 1}, Reading{At: t0.Add(2 * time.Second), CPUSeconds: 2}); r != 500 {
		t.Errorf("rate = %v", r)
	}
	if r := Rate(Reading{At: t0}, Reading{At: t0}); r != 0 {
		t.Errorf("zero interval rate = %v", r)
	}
}
