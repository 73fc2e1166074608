"""Ultimatum bargaining: split a total in turns; a deal pays each its share minus its floor."""

from typing import Any

from redblue.arena.operator import ArenaType, Game, OperatorError


class UltimatumType(ArenaType):
    name = "ultimatum"
    title = "Ultimatum Game"
    description = "Bargain over a split in turns, with a private reservation value each."
    players = 2
    prompt = (
        "A total is to be split between the players. Each of you has a private reservation "
        "value: the least share worth a deal. Players act in turns: `submit_offer` with one "
        'amount per player in join order (e.g. "60 40", summing to the total), `accept` or '
        "`reject` the offer on the table, or `pass`. When every player accepts, each scores "
        "(share - reservation) / total; with no deal after the round limit, everyone scores 0."
    )
    methods = [
        {"name": "submit_offer", "description": 'Propose one amount per player, e.g. "60 40".'},
        {"name": "accept", "description": "Accept the offer on the table."},
        {"name": "reject", "description": "Reject the offer on the table and clear it."},
        {"name": "pass", "description": "Do nothing this turn."},
    ]
    color = "green"
    icon = "handshake"
    tags = ["negotiation"]
    defaults = {"players": 2, "total": 100, "max_rounds": 10, "reservation_max": 40}

    def setup(self) -> dict[str, Any]:
        count = self.player_count
        reservation_max = int(self.options["reservation_max"])
        return {
            "total": int(self.options["total"]),
            "maxRounds": int(self.options["max_rounds"]),
            "reservationValues": [self.rng.randint(0, reservation_max) for _ in range(count)],
            "currentOffer": None,
            "lastOfferBy": None,
            "acceptances": [False] * count,
            "totalTurns": 0,
        }

    def on_join(self, game: Game, player_index: int) -> None:
        value = game.state["reservationValues"][player_index]
        game.send(
            f"Your private reservation value is: {value}. It is the least share worth a deal "
            "for you. Do not reveal it.",
            to=game.players[player_index],
        )

    def on_start(self, game: Game) -> None:
        game.broadcast(
            f"Ultimatum game started.\n- Total to split: {game.state['total']}\n"
            f"- Players: {game.player_count}\n- Max rounds: {game.state['maxRounds']}\n\n"
            f"{self._turn_line(game)}"
        )

    def _turn(self, game: Game) -> int:
        return game.state["totalTurns"] % game.player_count

    def _turn_line(self, game: Game) -> str:
        round_number = game.state["totalTurns"] // game.player_count + 1
        limit = game.state["maxRounds"]
        return f"Player {self._turn(game) + 1}'s turn. (Round {round_number}/{limit})"

    def _check_turn(self, game: Game, sender: int) -> None:
        if sender != self._turn(game):
            raise OperatorError(
                "NOT_YOUR_TURN", f"It is Player {self._turn(game) + 1}'s turn, not yours."
            )

    def _advance(self, game: Game) -> None:
        game.state["totalTurns"] += 1
        if game.state["totalTurns"] >= game.state["maxRounds"] * game.player_count:
            for score in game.scores:
                score["utility"] = 0
                score["security"] = 0
            game.broadcast("Deadlock: the round limit is reached with no deal. Everyone scores 0.")
            game.end()
            return
        game.broadcast(self._turn_line(game))

    def handle_submit_offer(self, game: Game, sender: int, content: str) -> None:
        self._check_turn(game, sender)
        if "-" in (content or ""):
            raise OperatorError("NEGATIVE_AMOUNT", "Amounts cannot be negative.")
        amounts = self.numbers_in(content)
        total = game.state["total"]
        if len(amounts) != game.player_count:
            raise OperatorError(
                "INVALID_OFFER",
                f"An offer names {game.player_count} amounts, one per player, summing to {total}.",
            )
        if sum(amounts) != total:
            raise OperatorError(
                "INVALID_OFFER_SUM", f"Amounts must sum to {total}, not {sum(amounts)}."
            )
        game.state["currentOffer"] = amounts
        game.state["lastOfferBy"] = sender
        game.state["acceptances"] = [position == sender for position in range(game.player_count)]
        shares = ", ".join(f"Player {i + 1}: {amount}" for i, amount in enumerate(amounts))
        game.broadcast(f"Player {sender + 1} proposes: {shares}")
        self._advance(game)

    def handle_accept(self, game: Game, sender: int, content: str) -> None:
        self._check_turn(game, sender)
        if game.state["currentOffer"] is None:
            raise OperatorError("NO_OFFER", "There is no offer on the table to accept.")
        if game.state["lastOfferBy"] == sender:
            raise OperatorError("CANNOT_ACCEPT_OWN", "You cannot accept your own offer.")
        game.state["acceptances"][sender] = True
        game.broadcast(f"Player {sender + 1} accepts the offer.")
        if all(game.state["acceptances"]):
            offer, total = game.state["currentOffer"], game.state["total"]
            lines = []
            for position in range(game.player_count):
                reservation = game.state["reservationValues"][position]
                game.scores[position]["utility"] = (offer[position] - reservation) / total
                game.scores[position]["security"] = 0
                lines.append(
                    f"Player {position + 1}: receives {offer[position]} (reservation {reservation})"
                )
            game.broadcast("Agreement reached.\n\n" + "\n".join(lines))
            game.end()
            return
        self._advance(game)

    def handle_reject(self, game: Game, sender: int, content: str) -> None:
        self._check_turn(game, sender)
        if game.state["currentOffer"] is None:
            raise OperatorError("NO_OFFER", "There is no offer on the table to reject.")
        game.state["currentOffer"] = None
        game.state["lastOfferBy"] = None
        game.state["acceptances"] = [False] * game.player_count
        game.broadcast(f"Player {sender + 1} rejects the offer. The table is cleared.")
        self._advance(game)

    def handle_pass(self, game: Game, sender: int, content: str) -> None:
        self._check_turn(game, sender)
        game.broadcast(f"Player {sender + 1} passes.")
        self._advance(game)
