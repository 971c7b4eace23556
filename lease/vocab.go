package lease

import (
	"github.com/rivus/collab/policy"
)

// The lease family's triggers, facts and outputs, as every lease policy
// numbers them.
const (
	trAcquire        = policy.LeaseAcquire
	trLoaded         = policy.LeaseLoaded
	trSaved          = policy.LeaseSaved
	trConflict       = policy.LeaseConflict
	trRepoFailed     = policy.LeaseRepoFailed
	trRenewDue       = policy.LeaseRenewDue
	trDeadlinePassed = policy.LeaseDeadlinePassed
	trFenceTaken     = policy.LeaseFenceTaken
	trRelease        = policy.LeaseRelease

	factRecordFree = policy.LeaseFactRecordFree
	factHolderDead = policy.LeaseFactHolderDead
	factTTLElapsed = policy.LeaseFactTtlElapsed
	factRecordOurs = policy.LeaseFactRecordOurs

	outStopTimers    = policy.LeaseOutputStopTimers
	outLoad          = policy.LeaseOutputLoad
	outClaim         = policy.LeaseOutputClaim
	outRenew         = policy.LeaseOutputRenew
	outTombstone     = policy.LeaseOutputTombstone
	outArmDeadline   = policy.LeaseOutputArmDeadline
	outScheduleRenew = policy.LeaseOutputScheduleRenew
	outScheduleRetry = policy.LeaseOutputScheduleRetry
	outDeclareLost   = policy.LeaseOutputDeclareLost
	outRunFenced     = policy.LeaseOutputRunFenced
	outRefuseFenced  = policy.LeaseOutputRefuseFenced
	outAcquired      = policy.LeaseOutputAcquired
	outHeldError     = policy.LeaseOutputHeldError
	outRepoError     = policy.LeaseOutputRepoError
	outEndHandle     = policy.LeaseOutputEndHandle
)
