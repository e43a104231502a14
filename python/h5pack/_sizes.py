"""set_output_size across reopens: the Loader reopens its reader (the next for after a break, set_epoch,
load_state_dict) from its config, so the sizes asked for must come along. The library applies a size
from the epoch after the last delivered batch's; each call replaces what earlier ones set from then on."""


class OutputSizes:
    """set_output_size's calls as (first epoch, (h, w)) in call order, and those a reopened reader still
    has to be given when their epoch starts."""

    def __init__(self, size0):
        self.size0, self.calls, self.to_come = size0, [], []

    def asked(self, first, size):
        """A call that applies from epoch FIRST on (the open reader has it)."""
        self.calls.append((first, size))
        self.to_come = [c for c in self.to_come if c[0] < first]

    def in_effect(self, epoch):
        """The size EPOCH gets: the last call whose first epoch is not later, else the construction's."""
        return next((size for first, size in reversed(self.calls) if first <= epoch), self.size0)

    def reopened_at(self, epoch):
        """The size to open a reader at EPOCH with (None: no call was made, the config's stands); the
        calls for later epochs are kept for due()."""
        if not self.calls:
            return None
        self.to_come = [c for c in self.calls if c[0] > epoch]
        return self.in_effect(epoch)

    def due(self, epoch):
        """At the start of EPOCH: the size the reader must be given now, or None."""
        if not any(first <= epoch for first, _ in self.to_come):
            return None
        self.to_come = [c for c in self.to_come if c[0] > epoch]
        return self.in_effect(epoch)
