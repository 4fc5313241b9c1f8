package knowncost

import (
	"math"
	"net/http/httptest"
	"testing"
	"time"
)

func TestProfile(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]Profile{
		"fixed":    {High: 20 * time.Millisecond},
		"batching": {High: 24 * time.Millisecond, Low: 8 * time.Millisecond, From: 10, To: 10},
		"falls":    {High: 24 * time.Millisecond, Low: 8 * time.Millisecond, From: 10, To: 16},
		"rises":    {High: 5 * time.Millisecond, Low: 9 * time.Millisecond, From: 100, To: 300},
	} {
		if err := p.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.PerRequest(0) != p.High {
			t.Errorf("%s: the first request costs %s, want %s", name, p.PerRequest(0), p.High)
		}
		// Cores is the integral of Marginal (midpoints of 1/100 s steps:
		// exact for a marginal linear between the profile's rates), and
		// what the requests burn: PerRequest × rate.
		integral := 0.0
		for i := 1; i <= 6000; i++ {
			r := float64(i) / 100
			integral += p.Marginal(r-0.005) / 100 / 1000
			if i%500 != 0 {
				continue
			}
			if math.Abs(integral-p.Cores(r)) > 1e-9 {
				t.Errorf("%s at %g/s: cores %.6f, the marginal's integral %.6f", name, r, p.Cores(r), integral)
			}
			if burnt := p.PerRequest(r).Seconds() * r; math.Abs(burnt-p.Cores(r)) > 1e-6 {
				t.Errorf("%s at %g/s: requests burn %.6f cores, the profile says %.6f", name, r, burnt, p.Cores(r))
			}
		}
	}
	// Issue 23's servers: the cost per request falls 37–48 % from 50/s to
	// capacity; this one falls 45 % from 5/s to 50/s.
	p := Profile{High: 24 * time.Millisecond, Low: 8 * time.Millisecond, From: 10, To: 16}
	if drop := 1 - p.PerRequest(50).Seconds()/p.PerRequest(5).Seconds(); drop < 0.45 || drop > 0.50 {
		t.Errorf("the cost per request falls %.0f %% from 5/s to 50/s", drop*100)
	}
	for _, bad := range []Profile{{}, {High: time.Millisecond, Low: time.Microsecond, From: 10, To: 5}, {High: time.Millisecond, Low: time.Microsecond, From: -1, To: 5}} {
		if bad.Validate() == nil {
			t.Errorf("%+v: valid", bad)
		}
	}
}

func TestRateMeter(t *testing.T) {
	t.Parallel()
	var m rateMeter
	const sec = int64(time.Second)
	at := int64(1000 * sec)
	if r := m.arrive(at, 2*time.Second); r != 0 {
		t.Errorf("one arrival: rate %v", r)
	}
	// Evenly spaced at 20/s: exact from the second arrival on, the window
	// full or not.
	for i := 1; i <= 100; i++ {
		at += sec / 20
		if r := m.arrive(at, 2*time.Second); math.Abs(r-20) > 1e-9 {
			t.Fatalf("arrival %d at 20/s: rate %v", i, r)
		}
	}
	// After a pause longer than the window, the new rate at once.
	at += 10 * sec
	if r := m.arrive(at, 2*time.Second); r != 0 {
		t.Errorf("first arrival after a pause: rate %v", r)
	}
	at += sec / 5
	if r := m.arrive(at, 2*time.Second); math.Abs(r-5) > 1e-9 {
		t.Errorf("5/s after a pause: rate %v", r)
	}
}

// TestServerBurnsItsProfile: the first request of an idle server burns the
// high cost; the next, right after it, the profile's lower cost at the
// rate the server measured between the two.
func TestServerBurnsItsProfile(t *testing.T) {
	t.Parallel()
	s := &Server{Cost: 20 * time.Millisecond, Low: time.Millisecond, FallFrom: 0.5, FallTo: 1}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	post(t, ts.URL)
	first := s.Stats()
	if first.BurnSeconds < 0.020 || first.BurnSeconds > 0.023 {
		t.Errorf("the first request burnt %.4f s, want 20 ms", first.BurnSeconds)
	}
	post(t, ts.URL)
	st := s.Stats()
	if st.Rate == 0 {
		t.Skip("cannot judge: the second request arrived more than the 2 s rate window after the first (a busy machine)")
	}
	want := s.Profile().PerRequest(st.Rate).Seconds()
	if want >= 0.020 || st.BurnSeconds-first.BurnSeconds < want || st.BurnSeconds-first.BurnSeconds > want+0.003 {
		t.Errorf("second request at %.1f/s burnt %.4f s, the profile's %.4f", st.Rate, st.BurnSeconds-first.BurnSeconds, want)
	}
	if st.CostLowMs != 1 || st.FallFrom != 0.5 || st.FallTo != 1 {
		t.Errorf("stats %+v do not state the profile", st)
	}
}
