// Package charts draws tokex's charts: terminal sparklines (ntcharts) for
// the TUI.
package charts

import (
	"math"

	"github.com/NimbleMarkets/ntcharts/sparkline"
	"github.com/charmbracelet/lipgloss"
)

// Series is a bounded time series, newest last.
type Series struct {
	Max    int // points kept; 0 means 240
	values []float64
}

// Push appends a value, dropping the oldest past Max.
func (s *Series) Push(v float64) {
	limit := s.Max
	if limit <= 0 {
		limit = 240
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		v = 0
	}
	s.values = append(s.values, v)
	if len(s.values) > limit {
		s.values = append(s.values[:0], s.values[len(s.values)-limit:]...)
	}
}

// Reset empties the series.
func (s *Series) Reset() { s.values = s.values[:0] }

// Len is the number of points.
func (s *Series) Len() int { return len(s.values) }

// Last is the newest value, 0 when empty.
func (s *Series) Last() float64 {
	if len(s.values) == 0 {
		return 0
	}
	return s.values[len(s.values)-1]
}

// Values returns the points, oldest first.
func (s *Series) Values() []float64 { return s.values }

// Peak is the largest value.
func (s *Series) Peak() float64 {
	var m float64
	for _, v := range s.values {
		m = max(m, v)
	}
	return m
}

// Sparkline renders the newest width points as a one-line ntcharts
// sparkline scaled to the largest of them (or floor, when larger), so a
// flat series sits low instead of filling the line.
func Sparkline(s *Series, width int, floor float64, style lipgloss.Style) string {
	return SparkValues(s.values, width, floor, style)
}

// SparkValues is Sparkline of a slice of values, oldest first.
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
