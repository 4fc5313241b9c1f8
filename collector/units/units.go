// Package units writes tokex's figures as people read them: a stage's rate
// ("500/s"), a count with thousands separators ("150,008") and a byte count
// in IEC units. It is a leaf: statistics, documents and the dashboard use
// it alike.
package units

import (
	"fmt"
	"strconv"
	"strings"
)

// StageLabel renders a rate like the article: "500/s".
func StageLabel(rps float64) string {
	if rps == float64(int64(rps)) {
		return fmt.Sprintf("%d/s", int64(rps))
	}
	return fmt.Sprintf("%.1f/s", rps)
}

// EnginesLabel is ", 2 engines" for an engine count, "" for none.
func EnginesLabel(n int) string {
	switch {
	case n == 1:
		return ", 1 engine"
	case n > 1:
		return fmt.Sprintf(", %d engines", n)
	}
	return ""
}

// Thousands formats 150008 as 150,008. It works on the decimal digits, so
// every int64 has a form (negating math.MinInt64 would overflow).
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i := 0; i < len(s); i++ {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Count is "1 run", "2 runs": n and the word, which takes an s unless n
// is 1.
func Count[N ~int | ~int64](n N, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// BytesIEC formats a byte count as KiB, MiB or GiB.
func BytesIEC(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%d KiB", b>>10)
	}
}
