// Package authadapters runs package auth behind every platform adapter
// (net/http, AWS Lambda events, Cloud Functions): the Authorization header
// must reach core, and core's statuses and challenge headers must reach the
// client unchanged. It lives in the test module so that the auth module
// requires no platform SDK.
package authadapters
