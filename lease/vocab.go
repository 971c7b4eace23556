package lease

import (
	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/policy"
)

// The lease family's triggers, facts and outputs, as every lease policy
// numbers them.
var (
	trAcquire        = policy.TriggerID(fsm.LeaseAcquire)
	trLoaded         = policy.TriggerID(fsm.LeaseLoaded)
	trSaved          = policy.TriggerID(fsm.LeaseSaved)
	trConflict       = policy.TriggerID(fsm.LeaseConflict)
	trRepoFailed     = policy.TriggerID(fsm.LeaseRepoFailed)
	trRenewDue       = policy.TriggerID(fsm.LeaseRenewDue)
	trDeadlinePassed = policy.TriggerID(fsm.LeaseDeadlinePassed)
	trFenceTaken     = policy.TriggerID(fsm.LeaseFenceTaken)
	trRelease        = policy.TriggerID(fsm.LeaseRelease)

	factRecordFree = policy.Facts(fsm.LeaseFactRecordFree)
	factHolderDead = policy.Facts(fsm.LeaseFactHolderDead)
	factTTLElapsed = policy.Facts(fsm.LeaseFactTtlElapsed)
	factRecordOurs = policy.Facts(fsm.LeaseFactRecordOurs)

	outStopTimers    = policy.Outputs(fsm.LeaseOutputStopTimers)
	outLoad          = policy.Outputs(fsm.LeaseOutputLoad)
	outClaim         = policy.Outputs(fsm.LeaseOutputClaim)
	outRenew         = policy.Outputs(fsm.LeaseOutputRenew)
	outTombstone     = policy.Outputs(fsm.LeaseOutputTombstone)
	outArmDeadline   = policy.Outputs(fsm.LeaseOutputArmDeadline)
	outScheduleRenew = policy.Outputs(fsm.LeaseOutputScheduleRenew)
	outScheduleRetry = policy.Outputs(fsm.LeaseOutputScheduleRetry)
	outDeclareLost   = policy.Outputs(fsm.LeaseOutputDeclareLost)
	outRunFenced     = policy.Outputs(fsm.LeaseOutputRunFenced)
	outRefuseFenced  = policy.Outputs(fsm.LeaseOutputRefuseFenced)
	outAcquired      = policy.Outputs(fsm.LeaseOutputAcquired)
	outHeldError     = policy.Outputs(fsm.LeaseOutputHeldError)
	outRepoError     = policy.Outputs(fsm.LeaseOutputRepoError)
	outEndHandle     = policy.Outputs(fsm.LeaseOutputEndHandle)
)
