// Package agent owns what rowkit knows of the agent clients it serves:
// how much of a tool's output each hands its model whole, as measured
// with the real clients (internal/agenttest pins the figures, so that a
// client upgrade that moves one fails there first), and what tells a
// command which client, and which model, it serves.
package agent
