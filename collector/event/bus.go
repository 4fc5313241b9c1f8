package event

import "sync"

// Consumer receives events in order. It must not block for long: slow
// consumers (the TUI) buffer on their own side.
type Consumer func(Event)

// Bus fans events out to consumers, one at a time and in emission order.
type Bus struct {
	mu   sync.Mutex
	subs []Consumer
}

// Subscribe adds a consumer.
func (b *Bus) Subscribe(c Consumer) {
	b.mu.Lock()
	b.subs = append(b.subs, c)
	b.mu.Unlock()
}

// Emit delivers e to every consumer.
func (b *Bus) Emit(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.subs {
		c(e)
	}
}
