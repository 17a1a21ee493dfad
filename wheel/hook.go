package wheel

import "github.com/raftick/raftick/wheel/internal/hook"

func init() {
	hook.NoNap = func(w any) { w.(*Wheel).napMin = -1 }
}
