"""The async engine: planning, streaming and answering documents."""
