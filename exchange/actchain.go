package exchange

import (
	"errors"
	"fmt"
	"slices"

	"github.com/golang-jwt/jwt/v5"
)

// MaxActChain is the deepest act chain ActChain reads: the JWS reader of
// tokex's server refuses JSON nested deeper than 32 levels, and no target
// has a reason to nest further.
const MaxActChain = 32

// Phrases of a refused act claim; they quote nothing of the token.
var (
	errActNotObject = errors.New("issued token: act is not an object with a string sub")
	errActTooDeep   = fmt.Errorf("issued token: act nests more than %d actors", MaxActChain)
)

// ActChain reads an issued token's act claim (RFC 8693 §4.1): the current
// actor's sub first, then each prior actor's, nil without act. An act that
// is not an object, or one without a non-empty string sub, at any depth,
// is an error; members other than sub and act (zitadel writes iss too) are
// not read.
func ActChain(c jwt.MapClaims) ([]string, error) {
	var chain []string
	v, ok := c["act"]
	for ok {
		m, isObject := v.(map[string]any)
		if !isObject {
			return nil, errActNotObject
		}
		sub, _ := m["sub"].(string)
		if sub == "" {
			return nil, errActNotObject
		}
		if len(chain) == MaxActChain {
			return nil, errActTooDeep
		}
		chain = append(chain, sub)
		v, ok = m["act"]
	}
	return chain, nil
}

// CheckActChain checks that the token's act chain is want exactly: want[0]
// the current actor, want[len-1] the first. An empty want requires no act.
func CheckActChain(c jwt.MapClaims, want []string) error {
	got, err := ActChain(c)
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				return fmt.Errorf("issued token: act chain differs at depth %d of %d (want %d actors)", i+1, len(got), len(want))
			}
		}
		return fmt.Errorf("issued token: act chain holds %d actors, want %d", len(got), len(want))
	}
	return nil
}
