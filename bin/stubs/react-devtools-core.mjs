// ink imports react-devtools-core only when DEV=true (it is an optional peer, not installed): the bundle gets this
// stand-in, so nothing is loaded at start for it.
export default { initialize() {}, connectToDevTools() {} }
