"""Who may call and how much: API keys and the caller's tenant, rate limits, each tenant's fair
share of request threads, signed tokens and the server secret they are signed with."""
