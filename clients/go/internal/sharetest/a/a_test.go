package a

import (
	"testing"

	"github.com/svc-stub/svc-stub/clients/go/internal/sharetest"
)

func TestSharesTheRunsStub(t *testing.T) { sharetest.SharesTheRunsStub(t, "a") }
