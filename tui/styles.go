package tui

import "github.com/charmbracelet/lipgloss"

// Styles are the dashboard's colours; adaptive for light and dark terminals.
type Styles struct {
	Title, Dim, Label, Value, Good, Bad, Warn, Current, Rule, Spark, Engine, Gen lipgloss.Style
}

// DefaultStyles returns the standard styles.
func DefaultStyles() Styles {
	c := func(light, dark string) lipgloss.AdaptiveColor {
		return lipgloss.AdaptiveColor{Light: light, Dark: dark}
	}
	return Styles{
		Title:   lipgloss.NewStyle().Bold(true).Foreground(c("#5A3FC0", "#B9A6FF")),
		Dim:     lipgloss.NewStyle().Foreground(c("#6B6B6B", "#8A8A8A")),
		Label:   lipgloss.NewStyle().Foreground(c("#444444", "#B0B0B0")),
		Value:   lipgloss.NewStyle().Bold(true),
		Good:    lipgloss.NewStyle().Foreground(c("#1B7F3A", "#5FD38D")),
		Bad:     lipgloss.NewStyle().Bold(true).Foreground(c("#B3261E", "#FF6B6B")),
		Warn:    lipgloss.NewStyle().Foreground(c("#8A5A00", "#FFC857")),
		Current: lipgloss.NewStyle().Bold(true).Foreground(c("#005FAF", "#6CB6FF")),
		Rule:    lipgloss.NewStyle().Foreground(c("#BBBBBB", "#444444")),
		Spark:   lipgloss.NewStyle().Foreground(c("#005FAF", "#6CB6FF")),
		Engine:  lipgloss.NewStyle().Foreground(c("#8E44AD", "#D59BF6")),
		Gen:     lipgloss.NewStyle().Foreground(c("#6B6B6B", "#9E9E9E")),
	}
}
