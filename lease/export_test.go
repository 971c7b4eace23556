package lease

// StoreSeen tells the contract monitor's store check (monitored builds)
// of a revision a test saw outside any manager, as writeBehind's.
var StoreSeen = storeSeen
