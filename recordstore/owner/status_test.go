// Specs for status read from the outside: the backlog counted in
// incoming/, and a state file that is not a state.

package owner_test

import (
	"context"
	"errors"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("status read from the outside", func() {
	It("counts the backlog in incoming/ when no owner answers, not from the state file", func() {
		path := storePath()
		Expect(owner.WriteState(owner.PathsFor(path).State, owner.State{Instance: "gone", Phase: owner.PhaseReady,
			HeartbeatAt: time.Now(), Backlog: 0})).To(Succeed())
		handBatch(path, "s", []recordstore.Row{{"k": "one"}}, nil)
		handBatchAs(path, spool.NewIdentity("hand"), 1, spool.StateIncoming, "s", []recordstore.Row{{"k": "two"}}, nil)
		st, err := owner.ReadStatus(context.Background(), path, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.SocketAlive).To(BeFalse())
		Expect(st.Backlog).To(Equal(2))
	})

	It("reports a state file that is not a state as PhaseUnknown with a hint and the backlog", func() {
		path := storePath()
		handBatch(path, "s", []recordstore.Row{{"k": "one"}}, nil)
		Expect(os.WriteFile(owner.PathsFor(path).State, []byte("{not json"), 0o600)).To(Succeed())
		_, err := owner.ReadState(owner.PathsFor(path).State)
		Expect(errors.Is(err, owner.ErrBadState)).To(BeTrue(), "%v", err)
		st, err := owner.ReadStatus(context.Background(), path, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Phase).To(Equal(owner.PhaseUnknown))
		Expect(st.Hint).To(Equal(owner.BadStateHint))
		Expect(st.Backlog).To(Equal(1))
	})
})
