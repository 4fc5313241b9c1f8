// Package charts draws tokex's charts: terminal sparklines (ntcharts) for
// the TUI.
package charts

import (
	"github.com/NimbleMarkets/ntcharts/sparkline"
	"github.com/charmbracelet/lipgloss"
)

// SparkValues renders the newest width of vals (oldest first) as a
// one-line ntcharts sparkline scaled to the largest of them (or floor,
// when larger), so a flat series sits low instead of filling the line.
func SparkValues(vals []float64, width int, floor float64, style lipgloss.Style) string {
	if width < 1 {
		return ""
	}
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	top := floor
	for _, v := range vals {
		top = max(top, v)
	}
	if top <= 0 {
		top = 1
	}
	sl := sparkline.New(width, 1, sparkline.WithMaxValue(top), sparkline.WithNoAutoMaxValue(), sparkline.WithStyle(style))
	sl.PushAll(vals)
	sl.Draw()
	return sl.View()
}
