// The same code reached through a wrapper on some ranks.
//
// A rank that runs part of its model through a wrapper — activation checkpointing
// (torch.utils.checkpoint), a torch.compile'd or dynamo-disabled function, a decorator — reaches
// the same modules through extra Python frames:
//   peers:  main|forward|nn.Module: Sequential_0|container.py(248): forward
//   rank 1: main|forward|_compile.py(42): inner|checkpoint.py(354): checkpoint|nn.Module: Sequential_0|container.py(248): forward
// Compared path by path, that work is extra on rank 1 and missing there at once: a finding as
// large as the wrapped work, about work every rank does. So a Python path that some ranks run and
// the others do not is aligned with a path that only those others run when it is that path with
// one wrapper's frames inserted — one block of function frames (no module's call among them)
// between a shared prefix and a shared suffix: its ranks' times are compared under the others'
// path, where a slower wrapped part still stands out. The wrapper's own paths — the ones that
// hold an aligned path and that the others have no counterpart of (main|forward|_compile.py(42):
// inner) — are not compared: their time is the aligned path's, compared already. Calls inside an
// aligned path that the others do not make (extra work inside the wrapped call) move under the
// others' path with it, where the deepest path explains its callers as usual.
//
// What the wrapper adds stays a finding of its own: the recomputation activation checkpointing
// runs in backward has no counterpart on the peers (no path of theirs is it with one block of
// frames left out), nor has work a rank runs that its peers do not.
#pragma once

#include <vector>

#include "rankscope/cluster/function_outliers.h"

namespace rankscope {

// Aligns the Python paths of `functions` (CollectFunctionSamples' output, in its order) as above:
// merges each aligned path's samples into its counterpart's, removes it and its wrapper paths,
// and renames the calls under it that have no counterpart. Keeps the key order. Returns the number
// of paths aligned.
size_t AlignWrappedPaths(std::vector<FunctionSamples>* functions);

}  // namespace rankscope
