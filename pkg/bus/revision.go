package bus

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Revision is the revision of a bucket's newest entry (0 for a bucket
// never written): what a writer puts in its SYNCED mark, the revision
// every reader holds once it read everything the writer wrote.
func (b *Bus) Revision(ctx context.Context, bucket Bucket) (uint64, error) {
	kv, err := b.bucket(bucket)
	if err != nil {
		return 0, err
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("status of %s: %w", b.BucketName(bucket), err)
	}
	if s, ok := st.(*jetstream.KeyValueBucketStatus); ok && s.StreamInfo() != nil {
		return s.StreamInfo().State.LastSeq, nil
	}
	return 0, nil
}
