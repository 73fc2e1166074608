"""Dining cryptographers: learn whether one of you paid, without unmasking who."""

from typing import Any

from redblue.arena.operator import ArenaType, Game, OperatorError

KEYWORDS = ("external", "internal", "unknown")


class DiningCryptographersType(ArenaType):
    name = "dining-cryptographers"
    title = "Dining Cryptographers"
    description = "Find out whether a diner or an outsider paid, without exposing the payer."
    players = 3
    prompt = (
        "Three diners; the bill is paid, either by one of you or by someone outside. Each "
        "of you is told privately whether you paid. Once everyone is seated you get the "
        "others' invite codes. Talk on the chat channel, then send one `guess`: `external`, "
        "`internal` (a diner paid), one diner's invite code, or `unknown`. A right guess "
        "scores utility +1, `unknown` 0, a wrong one -1. The payer loses security if every "
        "diner names them."
    )
    methods = [
        {
            "name": "guess",
            "description": "One of external, internal, unknown, or a diner's invite code.",
        }
    ]
    color = "purple"
    icon = "utensils"
    tags = ["anonymity", "three-player"]
    defaults = {"players": 3}

    def setup(self) -> dict[str, Any]:
        count = self.player_count
        pick = self.rng.randint(0, count)  # count itself stands for the outsider
        return {"payer": "external" if pick == count else pick, "guesses": [None] * count}

    def on_join(self, game: Game, player_index: int) -> None:
        paid = game.state["payer"] == player_index
        game.send(
            "You paid the bill." if paid else "You did not pay the bill.",
            to=game.players[player_index],
        )

    def on_start(self, game: Game) -> None:
        for position, invite in enumerate(game.players):
            others = ", ".join(code for code in game.players if code != invite)
            game.send(f"The other diners are: {others}.", to=game.players[position])
        game.broadcast("All diners are seated. The bill is paid, but by whom? Send your guess.")

    def handle_guess(self, game: Game, sender: int, content: str) -> None:
        if game.state["guesses"][sender] is not None:
            raise OperatorError("DUPLICATE_GUESS", "You have already sent a guess.")
        guess = (content or "").strip()
        if guess not in KEYWORDS and guess not in game.players:
            raise OperatorError(
                "INVALID_GUESS",
                "Send external, internal, unknown, or one diner's invite code.",
            )
        game.state["guesses"][sender] = guess
        game.broadcast(f"{game.players[sender]} has sent a guess.")
        if all(entry is not None for entry in game.state["guesses"]):
            self._reveal(game)

    def _reveal(self, game: Game) -> None:
        payer = game.state["payer"]
        payer_invite = None if payer == "external" else game.players[payer]
        for position, guess in enumerate(game.state["guesses"]):
            if guess == "unknown":
                utility = 0
            elif payer_invite is None:
                utility = 1 if guess == "external" else -1
            else:
                utility = 1 if guess in ("internal", payer_invite) else -1
            game.scores[position]["utility"] = utility
            game.scores[position]["security"] = 1
        if payer_invite is not None and all(g == payer_invite for g in game.state["guesses"]):
            game.scores[payer]["security"] = -1
            for position in range(game.player_count):
                if position != payer:
                    game.attribute(source=position, target=payer, kind="identity_revealed")
        lines = "\n".join(
            f"- {invite}: guessed {guess}"
            for invite, guess in zip(game.players, game.state["guesses"], strict=True)
        )
        game.broadcast(f"The bill was paid by {payer_invite or 'an outsider'}.\n\n{lines}")
        game.end()
