"""Card guessing exactly, in rational arithmetic for small decks: the game's rules and where
each strategy of the family is defined, with its exact evaluation.

- ``yes_no.py``: yes/no (``partial``) feedback through the (c, p) statistic; ``optimal`` and
  ``greedy``, and the evaluation of any chooser;
- ``entropy_weighted.py``: the ``info`` move (Gural, Simper & So 2019, section 5);
- ``belief_players.py``: ``count_tracker`` and ``constant_decrement``, players with a
  private belief (section 6), and any chooser as a player for the simulations;
- ``complete_feedback.py``, ``no_feedback.py``: the other feedbacks (``sequence``: a fixed
  list of types named in turn, no feedback);
- ``entropy_bounds.py``: Fano and Feder-Merhav bounds on the complete-feedback score.

The family's eighth strategy, ``persistent``, is a policy of the ranked engine
(``uniform_deck/values.py``, played in ``simulation/persistent.py``).
"""
