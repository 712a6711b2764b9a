namespace cds::verify {}
