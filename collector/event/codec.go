package event

import (
	"encoding/json"
	"fmt"
)

// Envelope is one line of an events.jsonl file.
type Envelope struct {
	Seq  uint64          `json:"seq"`
	Kind Kind            `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// Marshal encodes an event with its sequence number as one JSON line.
func Marshal(seq uint64, e Event) ([]byte, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Envelope{Seq: seq, Kind: e.Kind(), Data: data})
}

// Unmarshal decodes one line written by Marshal.
func Unmarshal(line []byte) (uint64, Event, error) {
	var env Envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return 0, nil, err
	}
	var e Event
	var err error
	switch env.Kind {
	case KindCampaignStarted:
		e, err = decode[CampaignStarted](env.Data)
	case KindRunStarted:
		e, err = decode[RunStarted](env.Data)
	case KindPhaseChanged:
		e, err = decode[PhaseChanged](env.Data)
	case KindWindow:
		e, err = decode[Window](env.Data)
	case KindResource:
		e, err = decode[Resource](env.Data)
	case KindHost:
		e, err = decode[Host](env.Data)
	case KindForecast, kindCapacity:
		e, err = decode[Forecast](env.Data)
	case KindAgentStatus:
		e, err = decode[AgentStatus](env.Data)
	case KindLog:
		e, err = decode[Log](env.Data)
	case KindRunFinished:
		e, err = decode[RunFinished](env.Data)
	case KindCampaignFinished:
		e, err = decode[CampaignFinished](env.Data)
	case KindIdle:
		e, err = decode[Idle](env.Data)
	case KindSearch:
		e, err = decode[Search](env.Data)
	case KindHostCheck:
		e, err = decode[HostCheck](env.Data)
	default:
		return env.Seq, nil, fmt.Errorf("unknown event kind %q", env.Kind)
	}
	return env.Seq, e, err
}

func decode[T Event](data json.RawMessage) (Event, error) {
	var v T
	err := json.Unmarshal(data, &v)
	return v, err
}
