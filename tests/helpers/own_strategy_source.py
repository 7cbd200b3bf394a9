"""A strategy of one's own used by several test files, as the source of a user's module:
the type with the most cards not yet confirmed, and after ``patience`` "no" answers in a row the
second most (the manual's example). ``explain`` gives the reasoning the terminal game shows."""

SWITCH_AFTER_NO = '''
class SwitchAfterNo:
    """The type with the most cards not yet confirmed; after `patience` "no" answers in a
    row, the second most (ties to the lowest type)."""

    def __init__(self, patience=2):
        self.patience = patience

    def start(self, deck):
        return tuple(deck), 0

    def guess(self, belief):
        left, streak = belief
        ranked = sorted((i for i in range(len(left)) if left[i]), key=lambda i: (-left[i], i))
        return ranked[1] if streak >= self.patience and len(ranked) > 1 else ranked[0]

    def update(self, belief, guess, yes):
        left, streak = belief
        if yes:
            return left[:guess] + (left[guess] - 1,) + left[guess + 1 :], 0
        return left, streak + 1

    def explain(self, belief):
        return f"{belief[1]} no in a row"
'''


FIRST_LEFT = '''
class FirstLeft:
    """Guess the lowest type believed to have cards left."""

    def start(self, deck):
        return tuple(deck)

    def guess(self, belief):
        return next(i for i, n in enumerate(belief) if n > 0)

    def update(self, belief, guess, yes):
        if not yes:
            return belief
        return tuple(n - (i == guess) for i, n in enumerate(belief))
'''
