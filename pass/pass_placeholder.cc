namespace cds::pass {}
