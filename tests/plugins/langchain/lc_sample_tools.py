"""LangChain tools written with langchain-core as its documentation shows: an ``@tool``
function, a ``BaseTool`` subclass, a retriever tool (langchain-core's own, with an artifact),
a toolkit, injected arguments, and things that are not tools."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.tools import (
    BaseTool,
    BaseToolkit,
    InjectedToolArg,
    InjectedToolCallId,
    Tool,
    ToolException,
    create_retriever_tool,
    tool,
)
from langchain_core.vectorstores import InMemoryVectorStore
from pydantic import BaseModel, Field


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


class DivideInput(BaseModel):
    a: float = Field(description="The dividend.")
    b: float = Field(description="The divisor, not zero.")


class Divide(BaseTool):
    """Divides, reporting a zero divisor to the model."""

    name: str = "divide"
    description: str = "Divide a by b."
    args_schema: type[BaseModel] = DivideInput
    handle_tool_error: bool = True
    digits: int = 2

    def _run(self, a: float, b: float) -> str:
        if b == 0:
            raise ToolException("cannot divide by zero; ask for another divisor")
        return str(round(a / b, self.digits))


@tool
def strict_root(x: float) -> float:
    """Square root of a non-negative number."""
    if x < 0:
        raise ToolException(f"{x} is negative")
    return float(x**0.5)


@tool(response_format="content_and_artifact")
def account(
    field: str,
    user_id: Annotated[str, InjectedToolArg],
    call_id: Annotated[str, InjectedToolCallId],
    tenant: Annotated[str, InjectedToolArg] = "default",
) -> tuple[str, dict[str, Any]]:
    """Read one field of the current user's account."""
    return f"{field} of {user_id} at {tenant}", {"user": user_id, "call": call_id}


_store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
_store.add_documents(
    [
        Document("The north region sold 42 units.", metadata={"region": "north"}),
        Document("The south region sold 17 units.", metadata={"region": "south"}),
    ]
)
search_reports = create_retriever_tool(
    _store.as_retriever(search_kwargs={"k": 1}),
    "search_reports",
    "Search the sales reports.",
    response_format="content_and_artifact",
)


class Maths(BaseToolkit):
    """Two tools in a toolkit."""

    def get_tools(self) -> list[BaseTool]:
        return [multiply, Divide(digits=3)]


TOOLS = [multiply, strict_root]

shout = Tool(name="shout", description="Shout a text.", func=lambda text: text.upper())


def not_decorated(x: int) -> int:
    """A plain function."""
    return x
