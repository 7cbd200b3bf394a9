"""What a run leaves to read: the summary, the HTML report, the index of the studies, the
headline, the searches' part of them."""
