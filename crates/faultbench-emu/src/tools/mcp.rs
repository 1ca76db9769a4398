//! MCP server for any toolbox (being written).
