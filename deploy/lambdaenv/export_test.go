package lambdaenv

// NewServer is Start up to lambda.Start, for the tests of what Start
// refuses.
var NewServer = newServer
