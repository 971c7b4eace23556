package lanes

import (
	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/policy"
)

// The lane family's triggers, facts and outputs, as every lane policy
// numbers them.
var (
	trWake            = policy.TriggerID(fsm.LaneWake)
	trSlotGranted     = policy.TriggerID(fsm.LaneSlotGranted)
	trActivationEnded = policy.TriggerID(fsm.LaneActivationEnded)
	trTimeout         = policy.TriggerID(fsm.LaneTimeout)
	trCancel          = policy.TriggerID(fsm.LaneCancel)
	trClose           = policy.TriggerID(fsm.LaneClose)

	factSlotFree   = policy.Facts(fsm.LaneFactSlotFree)
	factQueueRoom  = policy.Facts(fsm.LaneFactQueueRoom)
	factQueueEmpty = policy.Facts(fsm.LaneFactQueueEmpty)

	outDequeue           = policy.Outputs(fsm.LaneOutputDequeue)
	outUnreserve         = policy.Outputs(fsm.LaneOutputUnreserve)
	outInterrupt         = policy.Outputs(fsm.LaneOutputInterrupt)
	outReleaseSlot       = policy.Outputs(fsm.LaneOutputReleaseSlot)
	outReserve           = policy.Outputs(fsm.LaneOutputReserve)
	outEnqueue           = policy.Outputs(fsm.LaneOutputEnqueue)
	outStart             = policy.Outputs(fsm.LaneOutputStart)
	outForget            = policy.Outputs(fsm.LaneOutputForget)
	outReportInterrupted = policy.Outputs(fsm.LaneOutputReportInterrupted)
	outStarted           = policy.Outputs(fsm.LaneOutputStarted)
	outQueued            = policy.Outputs(fsm.LaneOutputQueued)
	outCoalesced         = policy.Outputs(fsm.LaneOutputCoalesced)
	outQueueFull         = policy.Outputs(fsm.LaneOutputQueueFull)
)
