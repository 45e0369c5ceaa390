import VerifyModel

/// A licence payload and the fields a right reading gives, written out by hand from the elements (never
/// computed by the reader): one per AAMVA version and one or more per variant real issuers ship.
public struct AAMVAFixture: Sendable, CustomStringConvertible {
    public var name: String
    /// The AAMVA version, or "pre" for the pre-standard layout.
    public var version: String
    /// The variant class of issue 26 it stands for (0: none, a plain layout of its version).
    public var variantClass: Int
    public var text: String
    /// The fields expected besides `barcode` (which is the text itself).
    public var expected: [DocumentKey: String]

    public var description: String { name }
}

public enum AAMVAFixtures {
    /// One licence holder's data as the 2005+ standards write it (MMDDCCYY dates), varied per fixture.
    public static func current(
        number: String, last: String, first: String, middle: String, birth: String, expiry: String,
        issue: String, sex: String = "2", street: String = "1 MAIN STREET", city: String = "SPRINGFIELD",
        state: String = "IL", zip: String = "627011234  ", extra: [(String, String)] = []
    ) -> [(String, String)] {
        [
            ("DCA", "D"), ("DCB", "NONE"), ("DCD", "NONE"), ("DBA", expiry), ("DCS", last), ("DAC", first), ("DAD", middle),
            ("DBD", issue), ("DBB", birth), ("DBC", sex), ("DAY", "BLU"), ("DAU", "066 in"), ("DAG", street), ("DAI", city),
            ("DAJ", state), ("DAK", zip), ("DAQ", number), ("DCF", "00417DD2231"), ("DCG", "USA"), ("DDE", "N"), ("DDF", "N"),
            ("DDG", "N")
        ] + extra
    }

    static func payload(_ version: Int, _ elements: [(String, String)], configure: (inout AAMVAPayload) -> Void = { _ in }) -> String {
        var payload = AAMVAPayload(version: version, elements: elements)
        configure(&payload)
        return payload.text
    }

    static let springfield: [DocumentKey: String] = [
        .addressStreet: "1 MAIN STREET", .addressCity: "SPRINGFIELD", .addressState: "IL", .addressZip: "62701-1234",
        .country: "USA", .documentAdditionalNumber: "00417DD2231"
    ]

    static func merged(_ base: [DocumentKey: String], _ more: [DocumentKey: String]) -> [DocumentKey: String] {
        base.merging(more) { _, new in new }
    }

    /// Versions 04 to 10: the same layout, a different holder each.
    static let modern: [AAMVAFixture] = [
        (4, "K2201974", "ALVAREZ", "MARISOL", "T", "03141979", "03142031", "03152023", "1979-03-14", "2031-03-14", "2023-03-15"),
        (5, "J00451123", "OKAFOR", "CHIDI", "EMEKA", "11301991", "11302029", "12012021", "1991-11-30", "2029-11-30", "2021-12-01"),
        (6, "604812377", "LINDQVIST", "ASTRID", "", "07041962", "07042030", "06282022", "1962-07-04", "2030-07-04", "2022-06-28"),
        (7, "S530-4410-8812", "NGUYEN", "BAO", "MINH", "02291988", "02282032", "01052024", "1988-02-29", "2032-02-28", "2024-01-05"),
        (8, "X99812", "O'BRIEN", "SEAN", "PATRICK", "12251970", "12252027", "12202019", "1970-12-25", "2027-12-25", "2019-12-20"),
        (9, "D0093-22174", "KOWALSKI-REYES", "ANNA", "MARIA", "05101985", "05102033", "04222025", "1985-05-10", "2033-05-10", "2025-04-22"),
        (10, "T64235789", "SAMPLE", "MICHAEL", "JOHN", "06061986", "06062030", "06062022", "1986-06-06", "2030-06-06", "2022-06-06")
    ].map { version, number, last, first, middle, birth, expiry, issue, birthISO, expiryISO, issueISO in
        let text = payload(
            version,
            current(
                number: number, last: last, first: first, middle: middle.isEmpty ? "NONE" : middle,
                birth: birth, expiry: expiry, issue: issue))
        var expected = merged(
            springfield,
            [
                .documentNumber: number, .lastName: last, .firstName: first, .dateOfBirth: birthISO, .dateOfExpiry: expiryISO,
                .dateOfIssue: issueISO, .sex: "F",
                .fullName: [first, middle, last].filter { !$0.isEmpty }.joined(separator: " ")
            ])
        if !middle.isEmpty { expected[.middleName] = middle }
        return AAMVAFixture(
            name: "version \(version)", version: String(format: "%02d", version), variantClass: 0, text: text,
            expected: expected)
    }

    public static let all: [AAMVAFixture] =
        modern + [
            AAMVAFixture(
                name: "version 01, ANSI header, DAA full name with commas, CCYYMMDD dates",
                version: "01", variantClass: 5,
                text: payload(
                    1,
                    [
                        ("DAQ", "A123-456-789"), ("DAA", "PEREZ,LUCIA,ISABEL"), ("DAG", "77 HARBOR RD"), ("DAI", "ANNAPOLIS"),
                        ("DAJ", "MD"), ("DAK", "21401 "), ("DBA", "20300412"), ("DBB", "19900412"), ("DBC", "2"),
                        ("DBD", "20220301"), ("DAU", "504"), ("DAY", "BRO")
                    ]
                ) { $0.issuer = "636003" },
                expected: [
                    .documentNumber: "A123-456-789", .lastName: "PEREZ", .firstName: "LUCIA", .middleName: "ISABEL",
                    .fullName: "LUCIA ISABEL PEREZ", .dateOfBirth: "1990-04-12", .dateOfExpiry: "2030-04-12",
                    .dateOfIssue: "2022-03-01", .sex: "F", .addressStreet: "77 HARBOR RD", .addressCity: "ANNAPOLIS",
                    .addressState: "MD", .addressZip: "21401"
                ]),
            AAMVAFixture(
                name: "version 01, DAA with an empty middle and a suffix in its fourth place",
                version: "01", variantClass: 5,
                text: payload(
                    1,
                    [
                        ("DAQ", "K-134-123-145-103"), ("DAA", "JOHNSTONE,JACOB,,3RD"), ("DAG", "12 BAY LN"),
                        ("DAI", "BALTIMORE"), ("DAJ", "MD"), ("DAK", "21230 "), ("DBA", "20290209"), ("DBB", "19910209"),
                        ("DBC", "1")
                    ]
                ) {
                    $0.fileType = "AAMVA"
                    $0.issuer = "636003"
                    $0.jurisdiction = nil
                },
                expected: [
                    .documentNumber: "K-134-123-145-103", .lastName: "JOHNSTONE", .firstName: "JACOB",
                    .additionalNameInfo: "3RD", .fullName: "JACOB JOHNSTONE", .dateOfBirth: "1991-02-09",
                    .dateOfExpiry: "2029-02-09", .sex: "M", .addressStreet: "12 BAY LN", .addressCity: "BALTIMORE",
                    .addressState: "MD", .addressZip: "21230"
                ]),
            AAMVAFixture(
                name: "version 01, DAA separated by spaces (first middle last), parts padded",
                version: "01", variantClass: 5,
                text: payload(
                    1,
                    [
                        ("DAQ", "29148833"), ("DAA", "GRACE  ELLEN   ROBINS "), ("DAG", "400 ELM AVE"), ("DAI", "ERIE"),
                        ("DAJ", "PA"), ("DAK", "16501      "), ("DBA", "20310101"), ("DBB", "19750615"), ("DBC", "2")
                    ]
                ) {
                    $0.fileType = "AAMVA"
                    $0.issuer = "636025"
                },
                expected: [
                    .documentNumber: "29148833", .lastName: "ROBINS", .firstName: "GRACE", .middleName: "ELLEN",
                    .fullName: "GRACE ELLEN ROBINS", .dateOfBirth: "1975-06-15", .dateOfExpiry: "2031-01-01", .sex: "F",
                    .addressStreet: "400 ELM AVE", .addressCity: "ERIE", .addressState: "PA", .addressZip: "16501"
                ]),
            AAMVAFixture(
                name: "version 01, AAMVA file type, a subfile that does not repeat its DL type (class 1)",
                version: "01", variantClass: 1,
                text: payload(
                    1,
                    [
                        ("DAA", "HARTLEY,DANA,M"), ("DAG", "60 STATE ST"), ("DAI", "WETHERSFIELD"), ("DAJ", "CT"),
                        ("DAK", "061091896  "), ("DAQ", "990000123"), ("DBA", "20300101"), ("DBB", "19610101"),
                        ("DBC", "2"), ("DBD", "20220223"), ("DAU", "506"), ("DAY", "BLU")
                    ]
                ) {
                    $0.fileType = "AAMVA"
                    $0.issuer = "636006"
                    $0.prefixed = false
                    $0.jurisdiction = nil
                },
                expected: [
                    .documentNumber: "990000123", .lastName: "HARTLEY", .firstName: "DANA", .middleName: "M",
                    .fullName: "DANA M HARTLEY", .dateOfBirth: "1961-01-01", .dateOfExpiry: "2030-01-01",
                    .dateOfIssue: "2022-02-23", .sex: "F", .addressStreet: "60 STATE ST", .addressCity: "WETHERSFIELD",
                    .addressState: "CT", .addressZip: "06109-1896"
                ]),
            AAMVAFixture(
                name: "version 02, DCT given names separated by a space",
                version: "02", variantClass: 0,
                text: payload(
                    2,
                    [
                        ("DAQ", "0123456789"), ("DCS", "FERREIRA"), ("DCT", "TOMAS HENRIQUE"), ("DBB", "08081983"),
                        ("DBA", "08082030"), ("DBD", "08012022"), ("DBC", "1"), ("DAG", "9 PINE CT"), ("DAI", "DOVER"),
                        ("DAJ", "DE"), ("DAK", "199010000  "), ("DCG", "USA")
                    ]
                ) { $0.issuer = "636011" },
                expected: [
                    .documentNumber: "0123456789", .lastName: "FERREIRA", .firstName: "TOMAS", .middleName: "HENRIQUE",
                    .fullName: "TOMAS HENRIQUE FERREIRA", .dateOfBirth: "1983-08-08", .dateOfExpiry: "2030-08-08",
                    .dateOfIssue: "2022-08-01", .sex: "M", .addressStreet: "9 PINE CT", .addressCity: "DOVER",
                    .addressState: "DE", .addressZip: "19901", .country: "USA"
                ]),
            AAMVAFixture(
                name: "version 03, DCT given names separated by a comma",
                version: "03", variantClass: 0,
                text: payload(
                    3,
                    [
                        ("DCS", "BAPTISTE"), ("DCT", "MARIE,CLAIRE"), ("DAQ", "B7734001"), ("DBB", "01311999"),
                        ("DBA", "01312029"), ("DBC", "2"), ("DAG", "5 RUE ST"), ("DAI", "AUGUSTA"), ("DAJ", "ME"),
                        ("DAK", "04330"), ("DCG", "USA")
                    ]
                ) { $0.issuer = "636041" },
                expected: [
                    .documentNumber: "B7734001", .lastName: "BAPTISTE", .firstName: "MARIE", .middleName: "CLAIRE",
                    .fullName: "MARIE CLAIRE BAPTISTE", .dateOfBirth: "1999-01-31", .dateOfExpiry: "2029-01-31", .sex: "F",
                    .addressStreet: "5 RUE ST", .addressCity: "AUGUSTA", .addressState: "ME", .addressZip: "04330",
                    .country: "USA"
                ]),
            AAMVAFixture(
                name: "version 08, a subfile without its DL type (class 1)",
                version: "08", variantClass: 1,
                text: payload(
                    8,
                    current(
                        number: "F220119", last: "MCCOY", first: "RUTH", middle: "ANN", birth: "09091966",
                        expiry: "09092028", issue: "09012020")
                ) {
                    $0.prefixed = false
                    $0.issuer = "636061"
                },
                expected: merged(
                    springfield,
                    [
                        .documentNumber: "F220119", .lastName: "MCCOY", .firstName: "RUTH",
                        .middleName: "ANN", .fullName: "RUTH ANN MCCOY", .dateOfBirth: "1966-09-09",
                        .dateOfExpiry: "2028-09-09", .dateOfIssue: "2020-09-01", .sex: "F"
                    ])),
            AAMVAFixture(
                name: "version 09, NONE placeholders in any case (middle name, suffix, second street line)",
                version: "09", variantClass: 2,
                text: payload(
                    9,
                    current(
                        number: "S11100222", last: "WALSH", first: "BRIDGET", middle: "NONE", birth: "04171993",
                        expiry: "04172031", issue: "04102023", street: "24 BEACON STREET",
                        extra: [("DAH", "NONE"), ("DCU", "none"), ("DDA", "F")])
                ) { $0.issuer = "636002" },
                expected: merged(
                    springfield,
                    [
                        .documentNumber: "S11100222", .lastName: "WALSH", .firstName: "BRIDGET",
                        .fullName: "BRIDGET WALSH", .dateOfBirth: "1993-04-17", .dateOfExpiry: "2031-04-17",
                        .dateOfIssue: "2023-04-10", .sex: "F", .addressStreet: "24 BEACON STREET"
                    ])),
            AAMVAFixture(
                name: "version 08, Ontario: CCYYMMDD dates, trailing commas, a Canadian postal code",
                version: "08", variantClass: 6,
                text: payload(
                    8,
                    [
                        ("DCA", "G"), ("DCB", "NONE"), ("DCD", "NONE"), ("DBA", "20300920"), ("DCS", "TESTER,"),
                        ("DAC", "PAT,"), ("DAD", "NONE"), ("DBD", "20250920"), ("DBB", "19800920"), ("DBC", "1"),
                        ("DAY", "BRN"), ("DAU", "180 cm"), ("DAG", "100 QUEEN ST W,"), ("DAI", "TORONTO,"),
                        ("DAJ", "ON"), ("DAK", "M5H2N2     "), ("DAQ", "T1234-56789-80920"), ("DCF", "AB1234567"),
                        ("DCG", "CAN"), ("DDE", "N"), ("DDF", "N"), ("DDG", "N")
                    ]
                ) { $0.issuer = "636012" },
                expected: [
                    .documentNumber: "T1234-56789-80920", .lastName: "TESTER", .firstName: "PAT", .fullName: "PAT TESTER",
                    .dateOfBirth: "1980-09-20", .dateOfExpiry: "2030-09-20", .dateOfIssue: "2025-09-20", .sex: "M",
                    .addressStreet: "100 QUEEN ST W", .addressCity: "TORONTO", .addressState: "ON", .addressZip: "M5H2N2",
                    .country: "CAN", .documentAdditionalNumber: "AB1234567"
                ]),
            AAMVAFixture(
                name: "version 07, an unreadable optional element (DBD) dropped, NONE issue date on another (class 7)",
                version: "07", variantClass: 7,
                text: payload(
                    7,
                    current(
                        number: "40012345", last: "GARZA", first: "HECTOR", middle: "NONE", birth: "10101960",
                        expiry: "10102030", issue: "2O2O1O1O", sex: "1")
                ) { $0.issuer = "636015" },
                expected: merged(
                    springfield,
                    [
                        .documentNumber: "40012345", .lastName: "GARZA", .firstName: "HECTOR",
                        .fullName: "HECTOR GARZA", .dateOfBirth: "1960-10-10", .dateOfExpiry: "2030-10-10",
                        .sex: "M"
                    ])),
            AAMVAFixture(
                name: "version 07, DBDNONE (class 7)",
                version: "07", variantClass: 7,
                text: payload(
                    7,
                    current(
                        number: "40012346", last: "GARZA", first: "ELENA", middle: "NONE", birth: "10111961",
                        expiry: "10112030", issue: "NONE")
                ) { $0.issuer = "636015" },
                expected: merged(
                    springfield,
                    [
                        .documentNumber: "40012346", .lastName: "GARZA", .firstName: "ELENA",
                        .fullName: "ELENA GARZA", .dateOfBirth: "1961-10-11", .dateOfExpiry: "2030-10-11",
                        .sex: "F"
                    ])),
            AAMVAFixture(
                name: "version 07, letters in a subfile offset (class 8)",
                version: "07", variantClass: 8,
                text: payload(
                    7,
                    current(
                        number: "123456-789", last: "SINGH", first: "HARPREET", middle: "KAUR", birth: "20010317",
                        expiry: "20300317", issue: "20250317", state: "AB", zip: "T5J0N3     ",
                        extra: [])
                ) { $0.issuer = "604432" }
                .replacingOccurrences(of: "DL0041", with: "DL00O1")
                .replacingOccurrences(of: "DCGUSA", with: "DCGCAN"),
                expected: [
                    .documentNumber: "123456-789", .lastName: "SINGH", .firstName: "HARPREET", .middleName: "KAUR",
                    .fullName: "HARPREET KAUR SINGH", .dateOfBirth: "2001-03-17", .dateOfExpiry: "2030-03-17",
                    .dateOfIssue: "2025-03-17", .sex: "F", .addressStreet: "1 MAIN STREET", .addressCity: "SPRINGFIELD",
                    .addressState: "AB", .addressZip: "T5J0N3", .country: "CAN", .documentAdditionalNumber: "00417DD2231"
                ]),
            AAMVAFixture(
                name: "pre-standard AAMVA header, DAB/DAL residence elements, dashed dates (class 8, 9)",
                version: "pre", variantClass: 8,
                text: payload(
                    1,
                    [
                        ("DAB", "DOWD"), ("DAC", "JAMES"), ("DAD", "R"), ("DAE", ""), ("DAL", "1234 OAK CT"), ("DAM", ""),
                        ("DAN", "WILMINGTON"), ("DAO", "NC"), ("DAP", "28451-7030"), ("DAQ", "000123456789"),
                        ("DAR", "C"), ("DAS", "None"), ("DAT", "None"), ("DAV", "5-10"), ("DAY", "BLU"), ("DAZ", "BRO"),
                        ("DBA", "06-19-2031"), ("DBB", "06-19-1990"), ("DBC", "M"), ("DBD", "06-22-2023")
                    ]
                ) {
                    $0.fileType = "AAMVA"
                    $0.headerDigits = "36004001"
                    $0.jurisdiction = nil
                },
                expected: [
                    .documentNumber: "000123456789", .lastName: "DOWD", .firstName: "JAMES", .middleName: "R",
                    .fullName: "JAMES R DOWD", .dateOfBirth: "1990-06-19", .dateOfExpiry: "2031-06-19",
                    .dateOfIssue: "2023-06-22", .sex: "M", .addressStreet: "1234 OAK CT", .addressCity: "WILMINGTON",
                    .addressState: "NC", .addressZip: "28451-7030"
                ]),
            AAMVAFixture(
                name: "version 01, the residence street (DAL) where the mailing street (DAG) is empty (class 9)",
                version: "01", variantClass: 9,
                text: payload(
                    1,
                    [
                        ("DAQ", "7654321"), ("DAA", "LEE,JORDAN,KAI"), ("DAG", ""), ("DAL", "88 RIVER RD"),
                        ("DAI", "SALEM"), ("DAJ", "OR"), ("DAK", "97301 "), ("DBA", "20290505"), ("DBB", "19850505"),
                        ("DBC", "9")
                    ]
                ) { $0.issuer = "636029" },
                expected: [
                    .documentNumber: "7654321", .lastName: "LEE", .firstName: "JORDAN", .middleName: "KAI",
                    .fullName: "JORDAN KAI LEE", .dateOfBirth: "1985-05-05", .dateOfExpiry: "2029-05-05", .sex: "X",
                    .addressStreet: "88 RIVER RD", .addressCity: "SALEM", .addressState: "OR", .addressZip: "97301"
                ])
        ]

    /// ZIP codes as real cards pad them (class 4), and the code a reader must report.
    public static let zipCodes: [(raw: String, zip: String)] = [
        ("633011", "63301"), ("96826     0", "96826"), ("71901 4455", "71901-4455"), ("0210800000", "02108"),
        ("53219000000", "53219"), ("232690000  ", "23269"), ("28451-7030", "28451-7030"), ("191031234", "19103-1234")
    ]

    /// A fixture whose expiry has passed by 2026-11-26 (the tests' today).
    public static let expired = AAMVAFixture(
        name: "version 10, expired in 2025", version: "10", variantClass: 0,
        text: payload(
            10,
            current(
                number: "E5550001", last: "PAST", first: "OLIVE", middle: "NONE", birth: "03031970",
                expiry: "03032025", issue: "03032017")),
        expected: merged(
            springfield,
            [
                .documentNumber: "E5550001", .lastName: "PAST", .firstName: "OLIVE",
                .fullName: "OLIVE PAST", .dateOfBirth: "1970-03-03", .dateOfExpiry: "2025-03-03",
                .dateOfIssue: "2017-03-03", .sex: "F"
            ]))

    /// British Columbia's licence PDF417: magnetic-stripe tracks, not AAMVA elements (class 10).
    public static let magneticStripe =
        "%BCVICTORIA^SPECIMEN,$TEST CARD^910 GOVERNMENT ST$VICTORIA BC  V8W 3Y8^?;6360289999991=290719800719=?_%0AV8W3Y8                     M185 88BRNBRN0000000000?"
}
