package stats

import (
	"encoding/json"
	"strings"
)

// WarningCode names a caveat on the figures; codes are stable, so scripts can
// match them in summary.json.
type WarningCode string

// The codes tokex raises. Codes marked Invalidating make a run fail its
// verdict: the figure it would print is not the server's.
const (
	WarnNote               WarningCode = "note"                // free text (evidence of schema 1, imports)
	WarnNoRequests         WarningCode = "no_requests"         // no request completed in the measured phase
	WarnDropped            WarningCode = "dropped_arrivals"    // arrivals never sent
	WarnEngineCPUUnknown   WarningCode = "engine_cpu_unknown"  // no engine CPU samples
	WarnIncompleteEvidence WarningCode = "incomplete_evidence" // rows disagree with another count
	WarnMalformedInput     WarningCode = "malformed_input"     // lines skipped while reading
	WarnCampaignEnded      WarningCode = "campaign_unfinished" // aborted or failed campaign
)

// Warning is one caveat: what it is (Code), which run (empty: campaign-wide)
// and what a person needs to know (Detail).
type Warning struct {
	Code   WarningCode `json:"code"`
	Run    string      `json:"run,omitempty"`
	Detail string      `json:"detail"`
}

// String renders "run: detail [code]" for terminals and markdown.
func (w Warning) String() string {
	var b strings.Builder
	if w.Run != "" {
		b.WriteString(w.Run + ": ")
	}
	b.WriteString(w.Detail)
	if w.Code != "" && w.Code != WarnNote {
		b.WriteString(" [" + string(w.Code) + "]")
	}
	return b.String()
}

// UnmarshalJSON also reads the plain strings of schema 1 as notes.
func (w *Warning) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*w = Warning{Code: WarnNote, Detail: s}
		return nil
	}
	type plain Warning
	return json.Unmarshal(b, (*plain)(w))
}

// Warn builds a warning.
func Warn(code WarningCode, run, detail string) Warning {
	return Warning{Code: code, Run: run, Detail: detail}
}
