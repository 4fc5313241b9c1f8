package k6

import (
	"strconv"
)

// k6's error codes (grafana/k6-docs, javascript-api/error-codes: the
// shared k6-errors-list), in tokex's words. k6 tags every failed request
// with one (error_code); its text (the error tag) is lost when k6 logs
// with --log-format=raw, as tokex's agents do.
var errorCodes = map[int]string{
	1000: "k6: generic error",
	1010: "k6: non-TCP network error",
	1020: "k6: invalid URL",
	1050: "k6: request timeout",
	1100: "k6: DNS error",
	1101: "k6: DNS: no IP found for the host",
	1110: "k6: IP blocked (blacklistIPs)",
	1111: "k6: hostname blocked (blockHostnames)",
	1200: "k6: TCP error",
	1201: "k6: TCP: broken pipe on write (the other side closed the connection)",
	1202: "k6: TCP: unknown error from the operating system",
	1210: "k6: TCP dial error",
	1211: "k6: TCP dial timeout",
	1212: "k6: TCP dial: connection refused",
	1213: "k6: TCP dial: unknown error",
	1220: "k6: TCP: connection reset by peer",
	1300: "k6: TLS error",
	1310: "k6: TLS: x509: certificate signed by unknown authority",
	1311: "k6: TLS: x509: certificate does not match the hostname",
	1600: "k6: HTTP/2 error",
	1610: "k6: HTTP/2 GOAWAY",
	1630: "k6: HTTP/2 stream error",
	1650: "k6: HTTP/2 connection error",
	1701: "k6: response decompression error",
}

// http2Codes are RFC 9113 §7's error code names, by value.
var http2Codes = []string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
	"STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR",
	"ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}

// ErrorText says in words what k6's error code means ("" for a code k6
// does not document, or not a number). 1400–1599 are HTTP statuses
// (1000 + status); 1611–1629, 1631–1649 and 1651–1669 are HTTP/2 errors
// carrying the peer's HTTP/2 error code (added to 1611, 1631, 1651).
func ErrorText(code string) string {
	n, err := strconv.Atoi(code)
	if err != nil || len(code) != 4 {
		return ""
	}
	if s, ok := errorCodes[n]; ok {
		return s + " (k6 error " + code + ")"
	}
	switch {
	case n >= 1400 && n <= 1599:
		return "k6: HTTP " + strconv.Itoa(n-1000) + " (k6 error " + code + ")"
	case n > 1610 && n < 1670 && n%20 != 10:
		off := (n - 1610) % 20 // base 1610, 1630 or 1650, then 1 + the HTTP/2 code
		kind := map[int]string{1610: "HTTP/2 GOAWAY", 1630: "HTTP/2 stream error", 1650: "HTTP/2 connection error"}[n-off]
		h2 := off - 1
		name := "code " + strconv.Itoa(h2)
		if h2 < len(http2Codes) {
			name = http2Codes[h2]
		}
		return "k6: " + kind + " " + name + " (k6 error " + code + ")"
	}
	return ""
}
