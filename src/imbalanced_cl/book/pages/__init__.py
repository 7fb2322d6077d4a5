"""What a reader sees: verdict tables, claim-level answers, the scoreboard, the intro, the methods page."""
