package k6import

import (
	"bufio"
	"io"
	"strings"

	"github.com/tokex-dev/tokex/internal/safefs"
	"github.com/tokex-dev/tokex/runner/k6"
)

// readPoints streams the samples of one k6 output file: --out csv (.csv,
// optionally .gz) or --out json (NDJSON). coarse is true when every
// timestamp was a whole second (k6's default CSV timeFormat).
func readPoints(path string, r io.Reader, fn func(k6.Point) error) (st k6.NDJSONStats, coarse bool, err error) {
	if !strings.HasSuffix(strings.TrimSuffix(path, ".gz"), ".csv") {
		st, err = k6.ReadNDJSON(r, fn)
		return st, false, err
	}
	coarse = true
	st, err = k6.ReadCSV(r, func(p k6.Point) error {
		coarse = coarse && p.Time.Nanosecond() == 0
		return fn(p)
	})
	return st, coarse && st.Points > 0, err
}

// isK6CSV sniffs a .csv file: k6's --out csv starts with its own header (a
// monitor CSV of resources does not).
func isK6CSV(src *safefs.Dir, path string) bool {
	rc, _, err := open(src, path)
	if err != nil {
		return false
	}
	defer rc.Close()
	first, _ := bufio.NewReaderSize(rc, 4096).ReadString('\n')
	return k6.IsCSVHeader(first)
}
