"""What every live socket here shares (SPEC §5 Live)."""

from channels.generic.websocket import AsyncJsonWebsocketConsumer


class PushOnlyConsumer(AsyncJsonWebsocketConsumer):
    """A socket that only pushes (boards, transcripts). A client's frames are dropped
    unread: Channels would parse text with the standard library and raise on a binary
    frame, so a hostile frame (binary, broken or 60,000-deep JSON) ended the socket with a
    server error."""

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        return
