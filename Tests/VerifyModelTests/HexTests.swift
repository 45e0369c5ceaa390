import Testing

@testable import VerifyModel

@Suite("Hexadecimal digests")
struct HexTests {
    @Test("bytes become two lower-case digits each, leading zeros kept")
    func hex() {
        #expect([UInt8]().hexString == "")
        #expect([0x00, 0x0f, 0xa0, 0xff].hexString == "000fa0ff")
        // The first bytes of FIPS 180-2's SHA-256("abc") test vector, as its appendix writes them.
        #expect([0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea].hexString == "ba7816bf8f01cfea")
    }
}
