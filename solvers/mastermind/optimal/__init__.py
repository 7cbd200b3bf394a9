"""The optimal Mastermind strategy: least expected number of guesses, by branch and bound.

The cost of a set S of candidate codes (jar-weighted, integer weights w) is the least total
``sum over s in S of w(s) * guesses(s)`` over every strategy, counted from the next guess on:

    cost(S) = W(S) + min over queries q of  sum over answers a != win of  cost(S_a(q))

where W(S) is the weight of S and S_a(q) the codes of S that answer a to q.  Any code may be
played (not only a still-feasible one).  This is the expected-case optimum that Koyama & Lai
(1993), *An optimal Mastermind strategy*, computed for 4 pegs and 6 colours (5625 guesses over
the 1296 codes) and Ville (2013), *An optimal mastermind (4,7) strategy and more results in
the expected case*, for 4 pegs and 7 colours, both by depth-first search with pruning.

The search here (a Numba kernel) is a depth-first branch and bound:

* a lower bound on cost(S) from the size and weights of S alone: one code can be won with the
  next guess, at most b with the guess after (b = number of non-winning answers), at most b^2
  with the third..., the heaviest codes first (:func:`.bounds.part_bound`);
* every query is first scored by the sum of its parts' bounds; queries are tried in increasing
  order of that bound and the search stops at the first whose bound reaches the best cost
  found; a part is searched only with the budget the best cost leaves it;
* queries that split S into the same parts (same partition, same winning code) are tried once;
  queries that neither split S nor can win are never tried; a colour in no code of S ("dead")
  answers nothing wherever it is played, so only the least dead colour is ever played;
* a code of S that every other code of S answers differently, and that is the heaviest, meets
  the bound: it is taken without looking at the other queries;
* symmetry: a permutation of the positions together with a permutation of equally weighted
  colours that maps every guess played so far to itself maps S to itself, so of the queries it
  maps onto each other only one is tried (the classic pruning of Koyama & Lai; here at every
  depth, as long as the history keeps a non-trivial symmetry);
* memoisation: the cost of a candidate set (keyed by a 128-bit hash of its codes and the guesses
  left) is stored once known, and a proven lower bound when the search of it was cut off.

A ``guess_limit`` bounds the number of guesses of every game (Koyama & Lai's 5626 for at most
five guesses on 4 x 6).

Modules: :mod:`.bounds` (lower bounds on a set's cost), :mod:`.partitions` (a set split by the
answers to a query), :mod:`.queries` (the queries worth trying on a set, in the order they are
tried), :mod:`.memo` (costs and choices kept), :mod:`.branch_and_bound` (the search kernel),
:mod:`.symmetries` (the game's symmetry group), :mod:`.optimum` (a game's optimum and the
decision tree it replays).
"""
