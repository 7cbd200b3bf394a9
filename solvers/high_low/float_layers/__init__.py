"""Higher/lower with a real deck in floating point, layer by layer: up to the full 13 x 4 deck.

The state of :mod:`solvers.high_low.deck` (remaining counts of the ranks below the card
showing, of its own rank, and above; ranks with no card left dropped) is stored here as a
*count vector* ``c`` (the nonzero counts in rank order, length ``L``) and a *position* of the
card showing in it: an entry ``j`` (its rank still has ``c[j]`` cards) or a gap ``j`` (its rank
has none left; it sits between entries ``j - 1`` and ``j``).  A count vector is one integer
code, ``c[j] - 1`` in bit field ``j``.  Layer ``m`` (``m`` cards left) holds the vectors of sum
``m``, grouped by length and in increasing code order inside a group; a vector's place in its
group is computed from its code (a ranking by digit sums, :func:`.coding._rank`), so no table over
all codes is stored.  With ``mirror`` (the optimal policy) only the vector of each pair ``c``,
``reversed(c)`` with the smaller code is solved, and a reversed vector is read from it:
reading the ranks downwards swaps "higher" and "lower", which the best call does not mind.
The majority rule (call "higher" when at least as many cards are above) breaks an even split
upwards, so it is not mirror-symmetric and is solved without merging.

Per vector a layer stores ``L`` numbers, ``W[j] = c[j] * V(c - e_j, j)``: the weight of the
next card being of entry ``j`` times the chance of no wrong call after it.  With ``m`` cards
left, ``V(c, position) = (sum of W on the called side [+ W of the rank showing, when an equal
card is not a miss]) / m``, on the better side (optimal) or the side holding more cards
(majority).  Every step is a sum of non-negative terms, a product or a quotient: nothing
cancels, so a probability near 1e-8 keeps about 1e-13 relative precision.
``P(perfect game) = sum(W of the full deck) / (ranks * suits)``.

Sizes (:mod:`.sizes`): ``sum_L suits**L`` vectors over all layers (8.9e7 for 13 x 4, at most
8.2e6 in one layer); two layers of ``W`` are held at once.  A long task
(:mod:`solvers.kit.task_context`): the memory budget of where the solve runs decides whether the
layers live in memory or in files (:mod:`.storage`); each finished layer is a checkpoint a
solve resumes after; progress is reported after every layer, in states.

Modules, in the order a solve uses them: :mod:`.counting` (count vectors counted, in plain
Python: group sizes, the ranking table), :mod:`.coding` (count vectors as integer codes,
their ranking compiled, the compiled kernels' options), :mod:`.sizes` (what a solve holds and
needs, where its layers live), :mod:`.layer` (the kernel that fills one layer),
:mod:`.departures` (where the best call beats the majority rule's), :mod:`.storage` (two
layers in memory or in files, kept as checkpoints), :mod:`.solver` (:func:`.solver.solve`,
layer after layer).
"""
