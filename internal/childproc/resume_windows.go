package childproc

import "os"

func resume(*os.Process) error { return nil }
