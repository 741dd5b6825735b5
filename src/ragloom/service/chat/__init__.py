"""Chat: assistants, sessions and their messages, the chat completion, and the views of them."""
