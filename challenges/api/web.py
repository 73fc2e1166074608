"""Player-facing read APIs under /web/api/ (public; personalised when logged in)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.api.serializers import LeaderboardSerializer, PublicChallengeSerializer
from challenges.models import Challenge
from challenges.selectors.challenges import challenges_public, challenges_visible
from challenges.selectors.leaderboards import leaderboard_for_challenge
from core.api import leaderboard_limit, object_or_404, paginated_response


def _visible_challenge(challenge_id) -> Challenge:
    return object_or_404(challenges_visible(), challenge_id)


class ChallengeListApi(APIView):
    @extend_schema(responses=PublicChallengeSerializer(many=True))
    def get(self, request):
        return paginated_response(request, self, challenges_public(), PublicChallengeSerializer)


class ChallengeDetailApi(APIView):
    @extend_schema(responses=PublicChallengeSerializer)
    def get(self, request, challenge_id):
        return Response(PublicChallengeSerializer(_visible_challenge(challenge_id)).data)


class ChallengeLeaderboardApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("limit", int, description="1–100, default 10")],
        responses=LeaderboardSerializer,
    )
    def get(self, request, challenge_id):
        limit = leaderboard_limit(request)
        challenge = _visible_challenge(challenge_id)
        rows = leaderboard_for_challenge(challenge=challenge, limit=limit)
        board = {
            "challenge_id": challenge.id,
            "scoring_strategy": challenge.scoring_strategy,
            "limit": limit,
            "entries": rows,
        }
        return Response(LeaderboardSerializer(board).data)
