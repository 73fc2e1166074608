"""`single`: one prompt, one reply (today's play, SPEC §4c), the first kind of play."""

from typing import ClassVar

from challenges.bridge.services import BridgeCall, EvaluationPlan, bridge_attempt_evaluate_async
from challenges.modes import PlayMode
from challenges.services.play import attempt_play_async
from challenges.services.play_stream import attempt_play_stream_start


class SinglePlay(PlayMode):
    name = "single"
    lane_records = True
    play_template = "challenges/_play_single.html"
    admin_fields: ClassVar[tuple[str, ...]] = ()

    async def attempt_async(self, *, challenge, account, prompt, ip, source, codename=""):
        return await attempt_play_async(
            challenge=challenge,
            account=account,
            prompt=prompt,
            ip=ip,
            source=source,
            codename=codename,
        )

    async def attempt_stream_start(self, *, challenge, account, prompt, ip, source, codename=""):
        return await attempt_play_stream_start(
            challenge=challenge,
            account=account,
            prompt=prompt,
            ip=ip,
            source=source,
            codename=codename,
        )

    async def bridge_evaluate(self, *, call: BridgeCall, plan: EvaluationPlan):
        return await bridge_attempt_evaluate_async(call=call, plan=plan)
