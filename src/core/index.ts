// The framework-free gating core: tools, routing keys, patterns, gates and per-run resolution.
export * from './types';
export { BUILTIN_TOOLS, ToolManifest, createManifest } from './tool-manifest';
export { MAX_ADDRESS_LENGTH, routingKeyOf, splitAddress } from './routing-key';
export { parsePattern, matchesPattern, compilePattern, type PatternResult, type KeyMatcher } from './pattern';
export { decideGate, decideAttachment } from './gate';
export { resolveRun } from './resolution';
export { compilePolicy, type CompiledPolicy } from './compiled-policy';
export { closestToolId, editDistance, foldToolToken } from './closest-tool';
export { legacyHasTool, legacyTokens, legacyToolSetKey, legacyToolkitName, mappedToolIds, readEnabledTools, TOOLKIT_NAME_MAX, type LegacyReading, type UnmatchedToken } from './legacy-enabled-tools';
export { parseAuthenticationResults, sameAuthservId, authenticationResultsSchema, authResultSchema, type AuthenticationResults, type AuthResult, type AuthenticationResultsParse } from './authentication-results';
export { authenticatedRoutingKey, isValidAuthservId, senderAuthenticationSchema, type SenderAuthentication, type SenderVerdict } from './sender-authentication';
