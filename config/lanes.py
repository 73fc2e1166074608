"""The raw lanes served in front of Django (core/fastlane.py): the hot paths only."""

from challenges.api.board_lane import PREFIX as BOARD_PREFIX
from challenges.api.board_lane import board_read_lane
from challenges.bridge.lane import challenge_evaluator_lane
from core.fastlane import Lane
from redblue.arena.lane import arena_lanes


def lanes_in_front_of(django_app) -> Lane:
    lane = Lane(django_app)
    lane.route("POST", "/bridge/dify/challenge-evaluator", challenge_evaluator_lane)
    lane.route("GET", BOARD_PREFIX + "*", board_read_lane)
    arena_lanes(lane)
    return lane
