// Package names holds tokex's two naming rules, each named for what it
// protects:
//
//   - File: one element of a path inside an evidence folder (campaign and
//     run ids). Letters, digits, '.', '_' and '-', never a leading '.', so a
//     name cannot climb out of its folder, hide, or mean anything to a shell
//     or a spreadsheet. Case is kept: ids on disk are what the user named.
//   - DNSLabel: a Kubernetes object name or label value (an RFC 1123 label:
//     lower-case letters, digits and '-', neither first nor last), which the
//     API server refuses otherwise.
//
// The two cannot be one: an id made a DNS label loses its case and its '.'
// and '_', and evidence ids must stay byte for byte what they were.
package names

import "strings"

const (
	// FileMax bounds a name File makes.
	FileMax = 64
	// IDMax bounds a name IsFile accepts: an id is a timestamp, '-' and a
	// name File made.
	IDMax = 128
	// DNSLabelMax bounds a DNSLabel: 63 is the label limit, and the names
	// made from it get suffixes (a run's index, Kubernetes' Pod suffix).
	DNSLabelMax = 52
)

// fileByte reports a byte File keeps.
func fileByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// File makes s a file name: letters, digits, '.', '_' and '-' are kept,
// any other character becomes '-' unless the name so far ends in '-',
// leading dots go, at most FileMax bytes; def when nothing is left.
func File(s, def string) string {
	b := make([]byte, 0, min(len(s), FileMax))
	for _, r := range s {
		if len(b) >= FileMax {
			break
		}
		switch {
		case r < 0x80 && fileByte(byte(r)):
			b = append(b, byte(r))
		case len(b) == 0 || b[len(b)-1] != '-':
			b = append(b, '-')
		}
	}
	for len(b) > 0 && b[0] == '.' {
		b = b[1:]
	}
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// IsFile reports a name that follows File's rule: 1 to IDMax bytes of
// File's bytes, not starting with '.'. Readers check every id with it
// before the id becomes part of a path.
func IsFile(s string) bool {
	if s == "" || len(s) > IDMax || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !fileByte(s[i]) {
			return false
		}
	}
	return true
}

// DNSLabel makes s a DNS-1123 label of at most DNSLabelMax bytes:
// lower-cased, any character but [a-z0-9-] a '-', no '-' at either end. It may
// be empty (a valid label value, not a valid object name).
func DNSLabel(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > DNSLabelMax {
		out = strings.TrimRight(out[:DNSLabelMax], "-")
	}
	return out
}
